#!/usr/bin/env bash
# End-to-end smoke test of the real launcher, through HTTP only:
#   java -jar bootstrap/target/jobq.jar all  on a free port against a fresh database, then
#   word_count → done {"words": 3}; fail times=1 → done with attempts 2; a permanent failure → dead,
#   retried → queued; /stats, /metrics, /health answer; SIGTERM → exit code 0 within the grace period.
# Any failing step exits non-zero. Needs: java (21+), psql, curl, python3.
# Env: JOBQ_JAR (default bootstrap/target/jobq.jar), SMOKE_ADMIN_URL (a postgres:// URL of a database
# where the user may CREATE DATABASE; default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=${JOBQ_JAR:-bootstrap/target/jobq.jar}
ADMIN_URL=${SMOKE_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
JAVA_BIN=${JAVA_HOME:+$JAVA_HOME/bin/}java
GRACE_SECONDS=10
DB=jobq_smoke_$(date +%s)_$$
DB_URL=$(python3 - "$ADMIN_URL" "$DB" <<'PY'
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))
PY
)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
BASE="http://127.0.0.1:$PORT"
LOG=$(mktemp /tmp/jobq-smoke.XXXXXX.log)
PID=

step() { echo "smoke: $*"; }
fail() {
  echo "smoke: FAILED: $*" >&2
  echo "smoke: last lines of the jobq log ($LOG):" >&2
  tail -n 40 "$LOG" >&2 || true
  exit 1
}
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  psql "$ADMIN_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

[ -f "$JAR" ] || fail "$JAR not found; build it with ./mvnw -B -ntp package -DskipTests"

# json FIELD_PATH < body: prints a field of a JSON document (a.b.c), or the whole of it with '.'
json() { python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in [k for k in sys.argv[1].split(".") if k]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)' "$1"; }

# post PATH BODY EXPECTED_STATUS: prints the response body
post() {
  local out status
  out=$(curl -sS -o /dev/stdout -w '\n%{http_code}' -X POST "$BASE$1" -H 'Content-Type: application/json' ${2:+-d "$2"})
  status=${out##*$'\n'}
  [ "$status" = "$3" ] || fail "POST $1 answered $status, expected $3: ${out%$'\n'*}"
  printf '%s' "${out%$'\n'*}"
}

# wait_for JOB_ID PYTHON_CONDITION_ON_j SECONDS: polls GET /jobs/ID until the condition holds
wait_for() {
  local deadline=$(( $(date +%s) + $3 )) body
  while :; do
    body=$(curl -sS "$BASE/jobs/$1")
    if printf '%s' "$body" | python3 -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if ($2) else 1)"; then
      printf '%s' "$body"; return 0
    fi
    [ "$(date +%s)" -lt "$deadline" ] || fail "job $1 never satisfied [$2] within $3 s; last: $body"
    sleep 0.2
  done
}

step "fresh database $DB"
psql "$ADMIN_URL" -qc "CREATE DATABASE $DB" >/dev/null

step "starting $JAR all on port $PORT"
DATABASE_URL=$DB_URL "$JAVA_BIN" -jar "$JAR" all --port "$PORT" --grace-period "${GRACE_SECONDS}s" >"$LOG" 2>&1 &
PID=$!
deadline=$(( $(date +%s) + 60 ))
until curl -sf "$BASE/health" >/dev/null 2>&1; do
  kill -0 "$PID" 2>/dev/null || fail "jobq exited during start-up"
  [ "$(date +%s)" -lt "$deadline" ] || fail "/health did not answer 200 within 60 s"
  sleep 0.3
done

step "word_count runs to done with {\"words\": 3}"
id=$(post /jobs '{"task": "word_count", "tenant": "acme", "payload": {"text": "hello job queue"}}' 201 | json id)
done_job=$(wait_for "$id" "j['status'] == 'done'" 30)
[ "$(printf '%s' "$done_job" | json result)" = '{"words": 3}' ] || fail "word_count result: $done_job"

step "fail with times=1 is retried and done with attempts=2"
id=$(post /jobs '{"task": "fail", "payload": {"times": 1}}' 201 | json id)
wait_for "$id" "j['status'] == 'done' and j['attempts'] == 2" 60 >/dev/null

step "a permanent failure is dead, and a retry queues it again"
id=$(post /jobs '{"task": "fail", "payload": {"times": 5, "permanent": true}}' 201 | json id)
dead=$(wait_for "$id" "j['status'] == 'dead'" 30)
[ "$(printf '%s' "$dead" | json attempts)" = 1 ] || fail "permanent failure took more than one attempt: $dead"
retried=$(post "/jobs/$id/retry" '' 200)
[ "$(printf '%s' "$retried" | json status)" = queued ] || fail "retry answered $retried"

step "/stats, /metrics and /health answer"
stats=$(curl -sSf "$BASE/stats")
printf '%s' "$stats" | python3 -c "import json,sys; s=json.load(sys.stdin); assert s['queues']['default']['done'] >= 2, s" \
  || fail "/stats: $stats"
metrics=$(curl -sSf "$BASE/metrics")
for family in jobq_jobs jobq_enqueued_total jobq_http_server_requests_seconds hikaricp_connections jvm_memory_used_bytes; do
  grep -q "^$family" <<<"$metrics" || fail "/metrics lacks $family"
done
[ "$(curl -sSf "$BASE/health" | json status)" = ok ] || fail "/health is not ok"

step "SIGTERM stops it with exit code 0 within the grace period"
started=$(date +%s)
kill -TERM "$PID"
set +e
wait "$PID"
rc=$?
set -e
PID=
took=$(( $(date +%s) - started ))
[ "$rc" = 0 ] || fail "exit code $rc after SIGTERM"
[ "$took" -le $(( GRACE_SECONDS + 5 )) ] || fail "took $took s to stop (grace ${GRACE_SECONDS} s)"

step "all steps passed"
