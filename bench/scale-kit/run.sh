#!/usr/bin/env bash
# Casefile API scaling on PostgreSQL: 1,2,4,8 uvicorn workers (and one `casefile worker`: the audit
# log's sequencer), vs bare Starlette, with PostgreSQL lock waits on audit tables. Usage and how to
# build the bundle (build.sh): README.md beside this file.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/scale-out}; mkdir -p "$OUT"
NS=${NS:-"1 2 4 8"}; DUR=${DUR:-8}; CONN=${CONN:-64}; WT=${WT:-4}
PGPORT=${PGPORT:-19601}; RPORT=${RPORT:-19602}; APORT=${APORT:-19610}; BPORT=${BPORT:-19611}
PY=${PY:-python3}; RT=${RT:-/tmp/scaleroot}
SRV_CPUS=${SRV_CPUS:-}; LOAD_CPUS=${LOAD_CPUS:-}
RAW=$OUT/raw.txt; RES=$OUT/result.txt; LOGS=$OUT/logs.txt; : >"$RAW"; : >"$RES"; : >"$LOGS"
say() { echo "$*" | tee -a "$RES"; }
export SCALE_MARK=1
if [ -n "$SRV_CPUS$LOAD_CPUS" ] && ! { taskset -c "${SRV_CPUS:-0}" true && taskset -c "${LOAD_CPUS:-0}" true; } 2>/dev/null; then echo "taskset unusable: not pinning"; SRV_CPUS=; LOAD_CPUS=; fi
SRVPIN=(); [ -n "$SRV_CPUS" ] && SRVPIN=(taskset -c "$SRV_CPUS")
pin_srv() { if [ -n "$SRV_CPUS" ]; then taskset -c "$SRV_CPUS" "$@"; else "$@"; fi; }
pin_load() { if [ -n "$LOAD_CPUS" ]; then taskset -c "$LOAD_CPUS" "$@"; else "$@"; fi; }
for p in $PGPORT $RPORT $APORT $BPORT; do (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null && { echo "port $p busy"; exit 1; }; done
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

say "host: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $($PY --version), srv_cpus=${SRV_CPUS:-all} load_cpus=${LOAD_CPUS:-all}"
if [ ! -x "$RT/usr/lib/postgresql/15/bin/postgres" ]; then
  mkdir -p "$RT" && tar -C "$RT" -xJf "$HERE/root.tar.xz" || exit 1; chmod 755 "$RT"
fi
el "unpacked"
if [ -z "${NOWHEELS:-}" ]; then
  $PY -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target "${SITE:-/tmp/site}" "$HERE"/whl/*.whl || exit 1
  export PYTHONPATH=$HERE/casefile-src:${SITE:-/tmp/site}${EXTRA_PP:+:$EXTRA_PP}
else
  export PYTHONPATH=$HERE/casefile-src
fi
el "wheels installed"
if [ ! -e /usr/share/zoneinfo/UTC ] && [ "$(id -u)" = 0 ] && [ -d /tmp/site/tzdata/zoneinfo ]; then mkdir -p /usr/share/zoneinfo && cp -r /tmp/site/tzdata/zoneinfo/. /usr/share/zoneinfo/; echo "zoneinfo copied from the tzdata wheel"; fi
PGBIN=$RT/usr/lib/postgresql/15/bin; L=$RT/libs
asnobody() { if [ "$(id -u)" = 0 ]; then $PY -c 'import os,sys,shutil; p=shutil.which(sys.argv[1]); os.setgroups([]); os.setgid(65534); os.setuid(65534); os.execv(p, sys.argv[1:])' "$@"; else "$@"; fi; }
PGDATA=/tmp/scale-pgdata; PGSOCK=/tmp/scale-pgsock
rm -rf "$PGDATA" "$PGSOCK"; mkdir -p "$PGDATA" "$PGSOCK"; chmod 700 "$PGDATA"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$PGDATA" "$PGSOCK"
export LD_LIBRARY_PATH_PG=$L
asnobody env LD_LIBRARY_PATH=$L "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C >>"$LOGS" 2>&1 || { tail -20 "$LOGS"; exit 1; }
PGOPTS="-p $PGPORT -k $PGSOCK -c listen_addresses=127.0.0.1 -c max_connections=600 -c shared_buffers=2GB -c jit=off"
asnobody env LD_LIBRARY_PATH=$L "${SRVPIN[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -o "$PGOPTS" -w start >>"$LOGS" 2>&1 || { cat "$PGDATA/server.log"; exit 1; }
el "postgres up"
psql() { LD_LIBRARY_PATH=$L "$PGBIN/psql" -h 127.0.0.1 -p $PGPORT -U postgres -X -q "$@"; }
say "postgres: $(psql -Atc 'select version()' | cut -c1-40)  $(psql -Atc 'show synchronous_commit'), fsync=$(psql -Atc 'show fsync')"
LD_LIBRARY_PATH=$L pin_srv "$RT/bin/redis-server" --port $RPORT --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --logfile /tmp/scale-redis.log --pidfile /tmp/scale-redis.pid || exit 1
sleep 0.5; el "redis up: $(LD_LIBRARY_PATH=$L "$RT/bin/redis-cli" -p $RPORT ping)"

export CASEFILE_ADMIN_EMAIL=bench@x.test CASEFILE_ADMIN_PASSWORD='Bench-Passw0rd!' \
  CASEFILE_RATE_LIMIT_USER=100000000/hour CASEFILE_RATE_LIMIT_API_KEY=100000000/hour CASEFILE_RATE_LIMIT_ADMIN=100000000/hour \
  CASEFILE_RATE_LIMIT_LOGIN=100000/minute CASEFILE_JWT_TTL_SECONDS=3600 CASEFILE_LOG_LEVEL=WARNING CASEFILE_AI_ENABLED=false \
  CASEFILE_DATABASE_URL=postgresql://postgres@127.0.0.1:$PGPORT/casefile_scale CASEFILE_REDIS_URL=redis://127.0.0.1:$RPORT/0
WRK() { LD_LIBRARY_PATH=$L pin_load "$RT/bin/wrk" "$@"; }
rps() { grep Requests/sec | awk '{print $2}'; }
p99() { grep -E '^ +99%' | awk '{print $2}'; }
non2xx() { grep -E 'Non-2xx|Socket errors' | tr -s ' ' | tr '\n' ';'; }
cpu() { $PY "$HERE/cpu.py"; }
stopwait() { kill "$1" 2>/dev/null; for i in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$1"; sleep 0.5; }
SPID=; BPID=; WKPID=
cleanup() { for p in $SPID $BPID $WKPID; do kill $p 2>/dev/null; done; sleep 1
  LD_LIBRARY_PATH=$L "$RT/bin/redis-cli" -p $RPORT shutdown nosave >/dev/null 2>&1
  asnobody env LD_LIBRARY_PATH=$L "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop >>"$LOGS" 2>&1; }
trap cleanup EXIT
declare -A G GP P PP B BP GC PC BC W GW
# Per backend: state and wait, and whether it waits on a lock over an audit table (its statement or
# the relation of its ungranted lock names one).
AUDITQ="select a.state||' '||coalesce(a.wait_event_type||':'||a.wait_event,'cpu')||'|'||case when a.wait_event_type='Lock' and (a.query like '%audit\_%' or exists(select 1 from pg_locks l where l.pid=a.pid and not l.granted and l.relation::regclass::text like 'audit\_%')) then 't' else 'f' end from pg_stat_activity a where a.datname='casefile_scale' and a.pid<>pg_backend_pid() and a.backend_type='client backend'"
waits_bg() {  # $1 file: pg_stat_activity of the Casefile database, every 0.25 s, for DUR-2 s
  ( end=$(( $(date +%s) + DUR - 1 )); sleep 1; while [ "$(date +%s)" -lt $end ]; do
      psql -Atc "${WAITQ:-$AUDITQ}" casefile_scale; echo --; sleep 0.25; done ) >"$1" 2>&1 &
  WPID=$!; }
casefile_run() {  # $1 N, $2 tag: GET and POST against `casefile serve --workers N`
  local N=$1 K=$2$1 out c0 c1 GE PE ncases
  psql -c "drop database if exists casefile_scale" -c "create database casefile_scale"
  export CASEFILE_DATA_DIR=/tmp/scale-data-$K; rm -rf "$CASEFILE_DATA_DIR"
  "${SRVPIN[@]}" $PY -c 'from casefile.cli import main; main()' serve --host 127.0.0.1 --port $APORT --workers $N --no-worker >/tmp/scale-serve-$K.log 2>&1 &
  SPID=$!; TOK=; CID=
  read -r TOK CID < <($PY "$HERE/api.py" http://127.0.0.1:$APORT) || true
  if [ -z "${CID:-}" ]; then say "$K: server did not come up"; tail -30 /tmp/scale-serve-$K.log | tee -a "$LOGS"; stopwait $SPID; return; fi
  # The audit log's sequencer (with the other background workers) in a process of its own, as
  # `serve --no-worker` expects; it signs its first tree head once it leads.
  "${SRVPIN[@]}" $PY -c 'from casefile.cli import main; main()' worker >/tmp/scale-worker-$K.log 2>&1 &
  WKPID=$!
  for i in $(seq 600); do [ "$(psql -Atc "select count(*) from audit_tree_heads" casefile_scale 2>/dev/null)" -gt 0 ] 2>/dev/null && break; sleep 0.2; done
  sleep 2; el "$K casefile up (case $CID), heads=$(psql -Atc 'select count(*) from audit_tree_heads' casefile_scale 2>&1)"
  local URL=http://127.0.0.1:$APORT/api/v1/cases
  WRK -t$WT -c$CONN -d2s -H "Authorization: Bearer $TOK" $URL/$CID >/dev/null
  waits_bg /tmp/scale-gwaits-$K.txt
  c0=$(cpu); out=$(WRK -t$WT -c$CONN -d${DUR}s --latency -H "Authorization: Bearer $TOK" $URL/$CID); c1=$(cpu); wait $WPID
  echo "=== $K GET"$'\n'"$out" >>"$RAW"; G[$K]=$(echo "$out" | rps); GP[$K]=$(echo "$out" | p99); GC[$K]=$($PY "$HERE/diffcpu.py" "$c0" "$c1" $DUR)
  GE=$(echo "$out" | non2xx); GW[$K]=$($PY "$HERE/waits.py" </tmp/scale-gwaits-$K.txt)
  waits_bg /tmp/scale-pwaits-$K.txt
  c0=$(cpu); out=$(WRK -t$WT -c$CONN -d${DUR}s --latency -s "${POSTLUA:-$HERE/post_case.lua}" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' $URL); c1=$(cpu); wait $WPID
  echo "=== $K POST"$'\n'"$out" >>"$RAW"; P[$K]=$(echo "$out" | rps); PP[$K]=$(echo "$out" | p99); PC[$K]=$($PY "$HERE/diffcpu.py" "$c0" "$c1" $DUR)
  PE=$(echo "$out" | non2xx); W[$K]=$($PY "$HERE/waits.py" </tmp/scale-pwaits-$K.txt)
  ncases=$(psql -Atc "select count(*) from cases" casefile_scale 2>&1 | head -1)
  stopwait $SPID; SPID=; stopwait $WKPID; WKPID=
  echo "=== serve $K (tail)" >>"$LOGS"; tail -15 /tmp/scale-serve-$K.log >>"$LOGS"
  echo "=== worker $K (tail)" >>"$LOGS"; tail -15 /tmp/scale-worker-$K.log >>"$LOGS"
  el "$K get ${G[$K]} post ${P[$K]} cases=$ncases get-errs:[$GE] post-errs:[$PE]" | tee -a "$RES"
}
bare_run() {
  local N=$1 out c0 c1
  (cd "$HERE" && exec env -u CASEFILE_DATABASE_URL "${SRVPIN[@]}" $PY -m uvicorn bare_asgi:app --host 127.0.0.1 --port $BPORT --workers $N --log-level warning --no-access-log) >/tmp/scale-bare-$N.log 2>&1 &
  BPID=$!
  for i in $(seq 100); do $PY -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$BPORT/api/v1/cases/x', timeout=1)" 2>/dev/null && break; sleep 0.2; done
  sleep 1.5
  WRK -t$WT -c$CONN -d2s http://127.0.0.1:$BPORT/api/v1/cases/x >/dev/null
  c0=$(cpu); out=$(WRK -t$WT -c$CONN -d${DUR}s --latency http://127.0.0.1:$BPORT/api/v1/cases/x); c1=$(cpu)
  echo "=== N=$N BARE"$'\n'"$out" >>"$RAW"; B[$N]=$(echo "$out" | rps); BP[$N]=$(echo "$out" | p99); BC[$N]=$($PY "$HERE/diffcpu.py" "$c0" "$c1" $DUR)
  stopwait $BPID; BPID=
  el "N=$N bare ${B[$N]}"
}
for N in $NS; do casefile_run $N ""; bare_run $N; done
if [ -n "${SYNCOFF_NS:-}" ]; then
  psql -c "alter system set synchronous_commit = off" -c "select pg_reload_conf()" >/dev/null
  say "--- synchronous_commit: $(psql -Atc 'show synchronous_commit') for N in $SYNCOFF_NS (tag so)"
  for N in $SYNCOFF_NS; do casefile_run $N so; done
fi
say ""
say "N | get req/s | get p99 | post req/s | post p99 | bare req/s | bare p99 | get eff | post eff | bare eff"
for N in $NS; do
  eff() { $PY -c "a,b=float('${1:-0}' or 0),float('${2:-0}' or 0); print(f'{a/($N*b):.2f}' if b else '-')"; }
  say "$N | ${G[$N]:-} | ${GP[$N]:-} | ${P[$N]:-} | ${PP[$N]:-} | ${B[$N]:-} | ${BP[$N]:-} | $(eff "${G[$N]:-}" "${G[1]:-}") | $(eff "${P[$N]:-}" "${P[1]:-}") | $(eff "${B[$N]:-}" "${B[1]:-}")"
done
say ""
say "Cores busy during each $DUR s run (/proc utime+stime deltas; py = Casefile/uvicorn processes [per process], pg = all PostgreSQL processes):"
for N in $NS; do say "N=$N GET: ${GC[$N]:-}  | POST: ${PC[$N]:-}  | BARE: ${BC[$N]:-}"; done
say ""
say "pg_stat_activity during POST (mean backends per sample, state + wait_event; 'cpu' = no wait; audit-lock-waits must be 0):"
for N in $NS; do say "N=$N ${W[$N]:-}"; done
say "pg_stat_activity during GET:"
for N in $NS; do say "N=$N ${GW[$N]:-}"; done
if [ -n "${SYNCOFF_NS:-}" ]; then
  say ""; say "synchronous_commit=off: N | get req/s | get p99 | post req/s | post p99 | get eff | post eff"
  for N in $SYNCOFF_NS; do b1=${SYNCOFF_NS%% *}
    say "$N | ${G[so$N]:-} | ${GP[so$N]:-} | ${P[so$N]:-} | ${PP[so$N]:-} | $($PY -c "a,b=float('${G[so$N]:-0}' or 0),float('${G[so$b1]:-0}' or 0); print(f'{a/($N/$b1*b):.2f}' if b else '-')") | $($PY -c "a,b=float('${P[so$N]:-0}' or 0),float('${P[so$b1]:-0}' or 0); print(f'{a/($N/$b1*b):.2f}' if b else '-')")"
    say "   cores GET: ${GC[so$N]:-} | POST: ${PC[so$N]:-}"; say "   waits GET: ${GW[so$N]:-}"; say "   waits POST: ${W[so$N]:-}"; done
fi
echo "=== postgres log tail" >>"$LOGS"; tail -20 "$PGDATA/server.log" >>"$LOGS"
echo "=== redis log tail" >>"$LOGS"; tail -5 /tmp/scale-redis.log >>"$LOGS"
el "done"
