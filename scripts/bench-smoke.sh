#!/usr/bin/env bash
# Every benchmark of bench/ in its `--smoke` mode (bench/smoke.py: tiny sizes, seconds, loopback),
# so that none rots unnoticed: a script that no longer runs against today's code fails CI here.
# The figures printed mean nothing. The PostgreSQL benchmarks run when PostgreSQL answers on
# 127.0.0.1:5432 (CI starts it); scale-kit/ is a kit for another machine (its README) and is not run.
#
#   scripts/bench-smoke.sh            # all of them
#   scripts/bench-smoke.sh NAME...    # some (file names without .py)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"

# NAME:OPTION runs bench/NAME.py --smoke OPTION (another path of the same script).
SQLITE=(access_check audit_write conflict_check create_burst export_matter export_matter:--s3 http_load profile_request startup
  upload_document upload_document_s3 webhook_delivery web_pages load_shedding ai_pipeline ai_throughput ai_quality
  search_passages)
# In this order: search_cases_ab.py --smoke reads the database search_cases.py --smoke loads.
POSTGRES=(audit_contention search_cases search_cases_ab webhook_workers webhook_chaos custom_field_filter)

if [ "$#" -gt 0 ]; then
  names=("$@")
elif pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  names=("${SQLITE[@]}" "${POSTGRES[@]}")
else
  echo "PostgreSQL does not answer on 127.0.0.1:5432: its benchmarks (${POSTGRES[*]}) are not run"
  names=("${SQLITE[@]}")
fi

failed=()
for name in "${names[@]}"; do
  started=$SECONDS
  log="$(mktemp)"
  script="${name%%:*}"
  option=()
  if [[ "$name" == *:* ]]; then option=("${name#*:}"); fi
  if timeout 300 "$python" "bench/$script.py" --smoke "${option[@]}" >"$log" 2>&1; then
    printf 'ok      %-18s %4d s\n' "$name" $((SECONDS - started))
  else
    printf 'FAILED  %-18s %4d s\n' "$name" $((SECONDS - started))
    tail -n 30 "$log" | sed 's/^/    /'
    failed+=("$name")
  fi
  rm -f "$log"
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "bench smoke runs failed: ${failed[*]}"
  exit 1
fi
