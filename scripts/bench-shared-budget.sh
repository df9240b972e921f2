#!/usr/bin/env bash
# The shared request budget under its real load: one upstream account enforcing 60 requests in
# any 60 s, and at once a worker syncing 5,000 employees, `hrsync onboard` of 30 rows and 20
# creates forwarded by a replica (serve.writes: forward). Prints what the upstream answered (429s
# included), the requests a minute used, when each part finished and how the sync ended.
# Exits non-zero on any 429 or any failed part. Takes about four minutes (paced).
#
#   bash scripts/bench-shared-budget.sh            # Postgres from HRSYNC_TEST_DATABASE_URL,
#                                                  # else postgres://postgres@127.0.0.1:5432/postgres
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DB="${HRSYNC_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
SCHEMA="bench_budget_$$"
TMP="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	psql "$DB" -qc "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
command -v psql >/dev/null || { echo "needs psql" >&2; exit 1; }

cd "$ROOT"
go build -o "$TMP/hrsync" ./cmd/hrsync
go build -o "$TMP/fakeupstream" ./source/fakeupstream/cmd/fakeupstream
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
UP="127.0.0.1:$(free_port)"
SERVE="127.0.0.1:$(free_port)"

"$TMP/fakeupstream" -addr "$UP" -employees 5000 -rate-limit 60 -window 1m >"$TMP/up.out" 2>"$TMP/up.err" &
pids+=($!)
UP_PID=$!
for _ in $(seq 50); do grep -q HRSYNC_SOURCE_API_KEY "$TMP/up.out" && break; sleep 0.1; done
KEY="$(sed -n 's/^HRSYNC_SOURCE_API_KEY=//p' "$TMP/up.out")"

export HRSYNC_SOURCE_URL="http://$UP" HRSYNC_SOURCE_API_KEY="$KEY" HRSYNC_WAREHOUSE_URL="$DB"
export HRSYNC_WAREHOUSE_SCHEMA="$SCHEMA" HRSYNC_SYNC_RESOURCES=working_patterns,employees
"$TMP/hrsync" migrate >/dev/null

python3 - "$TMP/hires.csv" <<'EOF'
import csv, sys
with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["First name", "Last name", "Work email", "Job title", "Start date"])
    for i in range(30):
        w.writerow([f"Budget{i}", "Bench", f"budget.bench{i}@example.com", "Analyst", "2026-12-01"])
EOF

start=$(date +%s.%N)
HRSYNC_SCHEDULE='0 0 1 1 *' "$TMP/hrsync" run --now 2>"$TMP/run.err" &
pids+=($!)
HRSYNC_SERVE_WRITES=forward HRSYNC_SERVE_API_KEYS=bench-key-4f9a0c7e2b1d8e6f3a5c9b0d "$TMP/hrsync" serve --addr "$SERVE" 2>"$TMP/serve.err" &
pids+=($!)
sleep 2

( "$TMP/hrsync" onboard "$TMP/hires.csv" >"$TMP/onboard.out" 2>"$TMP/onboard.err"; echo $? >"$TMP/onboard.rc"; date +%s.%N >"$TMP/onboard.end" ) &
( ok=0
  for i in $(seq 20); do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-API-KEY: bench-key-4f9a0c7e2b1d8e6f3a5c9b0d' -H 'Content-Type: application/json' \
		--max-time 60 -d "{\"employee\":{\"first_name\":\"Fwd$i\",\"last_name\":\"Bench\",\"email\":\"fwd.bench$i@example.com\",\"join_date\":\"2026-12-01\"}}" \
		"http://$SERVE/v1/employees")
	[ "$code" = 201 ] && ok=$((ok+1))
  done
  echo "$ok" >"$TMP/forward.ok"; date +%s.%N >"$TMP/forward.end" ) &

# The sync has ended when every collection's newest ledger row is finished.
for _ in $(seq 600); do
	left=$(psql "$DB" -Atc "SELECT count(*) FROM $SCHEMA.sync_runs WHERE finished_at IS NULL" 2>/dev/null || echo 1)
	done_runs=$(psql "$DB" -Atc "SELECT count(DISTINCT resource) FROM $SCHEMA.sync_runs WHERE finished_at IS NOT NULL" 2>/dev/null || echo 0)
	[ "$left" = 0 ] && [ "$done_runs" = 2 ] && [ -f "$TMP/onboard.end" ] && [ -f "$TMP/forward.end" ] && break
	sleep 1
done
sync_end=$(psql "$DB" -Atc "SELECT extract(epoch FROM max(finished_at)) FROM $SCHEMA.sync_runs")
kill "$UP_PID"; wait "$UP_PID" 2>/dev/null || true
sleep 0.2

echo "upstream: $(cat "$TMP/up.err")"
python3 - "$start" "$sync_end" "$(cat "$TMP/onboard.end")" "$(cat "$TMP/forward.end")" "$(cat "$TMP/up.err")" <<'EOF'
import re, sys
start, sync_end, onb, fwd = map(float, sys.argv[1:5])
m = re.search(r"(\d+) requests", sys.argv[5])
n = int(m.group(1)) if m else 0
span = max(sync_end, onb, fwd) - start
print(f"all done after {span:.1f} s: {n} requests, {n / span * 60:.1f} a minute, {n / span:.3f} of the budget")
print(f"sync ended after {sync_end - start:.1f} s; onboarding after {onb - start:.1f} s; forwarded creates after {fwd - start:.1f} s")
EOF
echo "forwarded creates answered 201: $(cat "$TMP/forward.ok") of 20"
echo "onboard (exit $(cat "$TMP/onboard.rc")): $(cat "$TMP/onboard.out")"
psql "$DB" -Atc "SELECT resource || ': ' || status || ', ' || walks || ' walk(s), ' || requests || ' requests, ' || inserted || ' new' FROM $SCHEMA.sync_runs ORDER BY id"
grep -h 'changed during the walk\|walking once more\|sync finished' "$TMP/run.err" | sed 's/^/worker: /' || true
fail=0
grep -q ', 0 answered 429' "$TMP/up.err" || { echo "FAIL: the upstream answered 429 (or said nothing)"; fail=1; }
[ "$(cat "$TMP/onboard.rc")" = 0 ] || { echo "FAIL: onboard"; fail=1; }
[ "$(cat "$TMP/forward.ok")" = 20 ] || { echo "FAIL: forwarded creates"; tail -5 "$TMP/serve.err"; fail=1; }
exit $fail
