#!/usr/bin/env bash
# Schemathesis against a live `casefile serve`, authenticated as an administrator, with the checks
# of issues 15 and 29 (scripts/schemathesis.toml): server errors, status codes, content types,
# response schemas, negative data rejected, valid data accepted, unsupported methods answered 405.
# Bounded: few examples per operation and an overall time limit. One worker: with two threads,
# Hypothesis parses lambda sources concurrently and CPython 3.11's AST parser fails at random
# ("AST constructor recursion depth mismatch", a tool error on a random operation).
#
#   scripts/schemathesis.sh                  # on the embedded default (SQLite in a temp data dir)
#   scripts/schemathesis.sh postgresql://…   # on that (empty) PostgreSQL database
#
# Environment: SCHEMATHESIS_MAX_EXAMPLES (default 8), SCHEMATHESIS_TIME_LIMIT (seconds, default 900: a hang,
# not a slow run; the coverage phase alone took over 240 s on a quiet machine once the schema published
# its patterns and enums),
# SCHEMATHESIS_SEED (default 1: the same cases every run; set another to explore), SCHEMATHESIS_PHASES
# (default examples,coverage,fuzzing).
set -euo pipefail
database_url="${1:-}"
max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-8}"
time_limit="${SCHEMATHESIS_TIME_LIMIT:-900}"
seed="${SCHEMATHESIS_SEED:-1}"
bin="$(dirname "$(command -v python)")"
here="$(cd "$(dirname "$0")" && pwd)"

work="$(mktemp -d)"
port="$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
root="http://127.0.0.1:$port"
email="fuzz-admin@casefile.test"
password="Fuzz-Admin-Passw0rd!"

export CASEFILE_DATA_DIR="$work/data"
if [ -n "$database_url" ]; then export CASEFILE_DATABASE_URL="$database_url"; fi
export CASEFILE_RATE_LIMIT_USER="1000000/hour" CASEFILE_RATE_LIMIT_API_KEY="1000000/hour"
export CASEFILE_RATE_LIMIT_ADMIN="1000000/hour" CASEFILE_RATE_LIMIT_LOGIN="1000000/minute"
export CASEFILE_AI_ENABLED=false            # the fuzzer tests the API, not the models
export CASEFILE_WEBHOOK_TIMEOUT_SECONDS=2   # registered URLs are made up: fail fast
export CASEFILE_LOG_LEVEL=WARNING
export CASEFILE_JWT_TTL_SECONDS=7200         # the run's one token outlives a slow run

"$bin/casefile" migrate >/dev/null
"$bin/casefile" users create-admin --email "$email" --password "$password" >/dev/null
"$bin/casefile" serve --port "$port" >"$work/serve.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 300); do  # up to 60 s: a loaded machine starts slowly
  curl -fsS "$root/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done

# Built once and kept: built here, so that schemathesis's 10-second read of it cannot time out.
curl -fsS --max-time 120 "$root/openapi.json" >/dev/null

token="$(curl -fsS -X POST "$root/api/v1/auth/login" -H 'Content-Type: application/json' \
  -d "{\"email\":\"$email\",\"password\":\"$password\"}" | python -c 'import json,sys; print(json.load(sys.stdin)["data"]["token"])')"
# The token must outlive the run (CASEFILE_JWT_TTL_SECONDS above). Left out:
# the operations that end the run's own session or can disable or demote its administrator (the
# fuzzer finds its id in `GET /users`); tests/users and tests/auth cover them.

# The rules JSON Schema cannot state (unique values, server-made cursors and keys, relations to now):
# scripts/schemathesis_hooks.py makes the fuzzer's requests follow them, as a client must.
export SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

config="$here/schemathesis.toml"

status=0
cd "$work"  # schemathesis keeps a cache (.schemathesis/) in the working directory: not in the repository
timeout --signal=INT --kill-after=15 "$time_limit" \
  "$bin/schemathesis" --config-file "$config" run "$root/openapi.json" \
    --header "Authorization: Bearer $token" \
    --phases "${SCHEMATHESIS_PHASES:-examples,coverage,fuzzing}" \
    --max-examples "$max_examples" \
    --seed "$seed" \
    --workers 1 \
    --request-timeout 20 \
    --exclude-operation-id auth_logout \
    --exclude-operation-id users_update \
    --exclude-operation-id users_delete \
    --suppress-health-check all \
    --no-color || status=$?
if [ "$status" -ne 0 ]; then
  echo "schemathesis failed (exit $status); the server's log:" >&2
  tail -n 80 "$work/serve.log" >&2
fi
exit "$status"
