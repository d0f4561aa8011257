#!/usr/bin/env bash
# Build the scale kit's bundle beside this script: root.tar.xz (PostgreSQL 15, Redis, wrk and their
# shared libraries), whl/ (every runtime dependency of Casefile as wheels for CPython 3.12 on x86-64
# Linux) and casefile-src/ (this checkout's src/). Run it on Debian 12 (x86-64) with PostgreSQL 15,
# Redis and wrk installed (apt-get install postgresql-15 redis-server wrk) and pip able to reach the
# package registry; then copy this whole directory to the machine that measures (see README.md).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PG=/usr/lib/postgresql/15
STAGE=$(mktemp -d); trap 'rm -rf "$STAGE"' EXIT
for tool in "$PG/bin/postgres" "$(command -v redis-server)" "$(command -v redis-cli)" "$(command -v wrk)"; do
  [ -x "$tool" ] || { echo "missing: $tool (apt-get install postgresql-15 redis-server wrk)"; exit 1; }
done

mkdir -p "$STAGE/usr/lib/postgresql/15/bin" "$STAGE/usr/lib/postgresql/15/lib" "$STAGE/usr/share/postgresql" "$STAGE/bin" "$STAGE/libs"
for b in postgres initdb pg_ctl psql pg_isready createdb; do cp -L "$PG/bin/$b" "$STAGE/usr/lib/postgresql/15/bin/"; done
cp -a "$PG/lib/." "$STAGE/usr/lib/postgresql/15/lib/"
rm -rf "$STAGE/usr/lib/postgresql/15/lib/bitcode" "$STAGE"/usr/lib/postgresql/15/lib/llvmjit*
cp -a /usr/share/postgresql/15 "$STAGE/usr/share/postgresql/"
cp -L "$(command -v redis-server)" "$(command -v redis-cli)" "$(command -v wrk)" "$STAGE/bin/"
# Every shared library the binaries use, except the C runtime the target has anyway.
for bin in "$STAGE"/usr/lib/postgresql/15/bin/* "$STAGE"/bin/*; do
  ldd "$bin" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+)\.so' | while read -r lib; do
  cp -L "$lib" "$STAGE/libs/"
done
tar -C "$STAGE" -cJf "$HERE/root.tar.xz" usr bin libs
echo "root.tar.xz: $(du -h "$HERE/root.tar.xz" | cut -f1)"

rm -rf "$HERE/whl" "$HERE/casefile-src"
python3 - "$REPO/pyproject.toml" >"$STAGE/requirements.txt" <<'PY'
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))
PY
echo "uvicorn==$(grep -oP '"uvicorn==\K[^"]+' "$REPO/pyproject.toml")" >>"$STAGE/requirements.txt"
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 --abi abi3 --abi none \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
  --platform any -d "$HERE/whl" -r "$STAGE/requirements.txt"
cp -a "$REPO/src" "$HERE/casefile-src"
echo "whl/: $(ls "$HERE/whl" | wc -l) wheels, $(du -sh "$HERE/whl" | cut -f1); casefile-src/ from $(git -C "$REPO" rev-parse --short HEAD)"
