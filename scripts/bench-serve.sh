#!/usr/bin/env bash
# serve before and after compression and the answer cache, side by side in one run: builds the
# old binary from a git revision (default 6fdc1e2, serve before this work) and the new one
# from the work tree, fills a Postgres database of its own with 20,000 employees (a
# sync from the fake upstream, unpaced; a schema for each binary), runs both binaries' `serve` on it, and loads each with
# wrk (8 connections, 1 thread a side), interleaved old, new, old, new, for:
#   page        the repeated 100-record page, no Accept-Encoding
#   page-gzip   the same page with Accept-Encoding: gzip
#   cold        every request a page never asked before (200 pages, each of up to 100 sizes:
#               20,000 distinct answers, from a random start), no Accept-Encoding: a miss of
#               the new binary's cache until those run out
# and prints the bytes of the page with and without curl --compressed, the requests/s of each
# round, their median per case and the ratios new/old. Exits non-zero on a setup failure.
#
#   bash scripts/bench-serve.sh [revision]     # BENCH_SECONDS=10 BENCH_ROUNDS=3 by default;
#                                              # Postgres from HRSYNC_TEST_DATABASE_URL, else
#                                              # postgres://postgres@127.0.0.1:5432/postgres
#
# Beside it, scripts/bench-serve-peer.sh measures the work tree's serve (cache on and off) against
# the replica a data team would hand-write (scripts/peer: Flask + psycopg2 under gunicorn) on the
# same warehouse of 20,000 employees: cold pages and page 1 repeated (issue 26).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REV="${1:-6fdc1e2}"
SECONDS_EACH="${BENCH_SECONDS:-10}"
ROUNDS="${BENCH_ROUNDS:-3}"
ADMIN="${HRSYNC_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
DBNAME="bench_serve_$$"
DB="$(python3 -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/"+sys.argv[2])))' "$ADMIN" "$DBNAME")"
TMP="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	psql "$ADMIN" -qc "DROP DATABASE IF EXISTS $DBNAME" >/dev/null 2>&1 || true
	git -C "$ROOT" worktree remove --force "$TMP/old-src" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "bench-serve: $*" >&2; exit 1; }
command -v psql >/dev/null || fail "needs psql"
command -v curl >/dev/null || fail "needs curl"
if ! command -v wrk >/dev/null; then
	apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; } || fail "cannot install wrk (apt-get install -y wrk, as root)"
fi

cd "$ROOT"
OLD="$(git rev-parse --verify "$REV^{commit}")" || fail "no revision $REV"
git worktree add --detach "$TMP/old-src" "$OLD" >/dev/null 2>&1 || fail "cannot check out $REV"
(cd "$TMP/old-src" && go build -o "$TMP/hrsync-old" ./cmd/hrsync) || fail "cannot build $REV"
go build -o "$TMP/hrsync-new" ./cmd/hrsync || fail "cannot build the work tree"
go build -o "$TMP/fakeupstream" ./source/fakeupstream/cmd/fakeupstream || fail "cannot build the fake upstream"

# The binaries run where no config.yaml is (the old one would refuse the new keys): settings
# come from the environment.
cd "$TMP"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
UP="127.0.0.1:$(free_port)"
"$TMP/fakeupstream" -addr "$UP" -employees 20000 >"$TMP/up.out" 2>"$TMP/up.err" &
pids+=($!)
for _ in $(seq 100); do grep -q HRSYNC_SOURCE_API_KEY "$TMP/up.out" && break; sleep 0.1; done
UPKEY="$(sed -n 's/^HRSYNC_SOURCE_API_KEY=//p' "$TMP/up.out")"
[ -n "$UPKEY" ] || fail "the fake upstream did not start: $(cat "$TMP/up.err")"

psql "$ADMIN" -qc "CREATE DATABASE $DBNAME" >/dev/null || fail "cannot create database $DBNAME"
export HRSYNC_SOURCE_URL="http://$UP" HRSYNC_SOURCE_API_KEY="$UPKEY" HRSYNC_SOURCE_RATE_LIMIT=0
export HRSYNC_WAREHOUSE_URL="$DB" HRSYNC_SYNC_RESOURCES=working_patterns,employees
# Each binary migrates and fills a schema of its own from the same upstream: a newer build's
# migrations (0013 and on) make a schema the older build refuses to serve.
for side in old new; do
	schema=hr_$side
	HRSYNC_WAREHOUSE_SCHEMA=$schema "$TMP/hrsync-$side" migrate >/dev/null 2>"$TMP/migrate-$side.err" || fail "migrate ($side): $(tail -n 1 "$TMP/migrate-$side.err")"
	HRSYNC_WAREHOUSE_SCHEMA=$schema "$TMP/hrsync-$side" sync >/dev/null 2>"$TMP/sync-$side.err" || fail "sync ($side): $(tail -n 3 "$TMP/sync-$side.err")"
	n="$(psql "$DB" -Atc "SELECT count(*) FROM $schema.employees")" || fail "cannot count employees"
	[ "$n" -ge 20000 ] || fail "the $side warehouse holds $n employees, want 20000"
done
kill "${pids[0]}" 2>/dev/null || true

KEY=bench-key-4f9a0c7e2b1d8e6f3a5c9b0d
OLD_ADDR="127.0.0.1:$(free_port)"
NEW_ADDR="127.0.0.1:$(free_port)"
HRSYNC_WAREHOUSE_SCHEMA=hr_old HRSYNC_SERVE_API_KEYS=$KEY "$TMP/hrsync-old" serve --addr "$OLD_ADDR" 2>"$TMP/old.err" &
pids+=($!)
HRSYNC_WAREHOUSE_SCHEMA=hr_new HRSYNC_SERVE_API_KEYS=$KEY "$TMP/hrsync-new" serve --addr "$NEW_ADDR" 2>"$TMP/new.err" &
pids+=($!)
PAGE="/v1/employees?page=37&per_page=100"
for addr in "$OLD_ADDR" "$NEW_ADDR"; do
	ok=
	for _ in $(seq 100); do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-KEY: $KEY" "http://$addr$PAGE")" = 200 ]; then ok=1; break; fi
		sleep 0.1
	done
	[ -n "$ok" ] || fail "serve on $addr did not answer: $(tail -n 3 "$TMP"/*.err)"
done

echo "revision old: $(git -C "$ROOT" log --oneline -1 "$OLD")"
echo "revision new: work tree at $(git -C "$ROOT" log --oneline -1 HEAD)"
echo "warehouse: $n employees in each of two schemas (hr_old, hr_new), Postgres database $DBNAME; wrk -t1 -c8 -d${SECONDS_EACH}s, $ROUNDS rounds"
echo
for side in old new; do
	addr=$OLD_ADDR; [ $side = new ] && addr=$NEW_ADDR
	plain="$(curl -s -o /dev/null -w '%{size_download}' -H "X-API-KEY: $KEY" "http://$addr$PAGE")"
	comp="$(curl -s --compressed -o /dev/null -w '%{size_download}' -H "X-API-KEY: $KEY" "http://$addr$PAGE")"
	echo "bytes $side: 100-record page $plain, with --compressed $comp ($(python3 -c "print(f'{$plain/$comp:.1f}x')"))"
done
echo

cat >"$TMP/cold.lua" <<'LUA'
-- Every request a distinct page: page 1-200 of per_page 100 down to 1 (the replica keys answers
-- by page and per_page as read, ignoring any other parameter), from a random start.
math.randomseed(os.time())
local n = math.random(0, 19999)
request = function()
	n = n + 1
	local i = n % 20000
	return wrk.format("GET", "/v1/employees?per_page=" .. (100 - math.floor(i / 200)) .. "&page=" .. (i % 200 + 1))
end
LUA
# run <old|new> <case>: requests/s of one wrk run.
run() {
	local addr=$OLD_ADDR extra=()
	[ "$1" = new ] && addr=$NEW_ADDR
	case "$2" in
	page) extra=("http://$addr$PAGE") ;;
	page-gzip) extra=(-H "Accept-Encoding: gzip" "http://$addr$PAGE") ;;
	cold) extra=(-s "$TMP/cold.lua" "http://$addr/") ;;
	esac
	local out
	out="$(wrk -t1 -c8 -d"${SECONDS_EACH}s" -H "X-API-KEY: $KEY" "${extra[@]}")" || fail "wrk: $out"
	if grep -q "Non-2xx" <<<"$out"; then fail "non-2xx answers: $out"; fi
	awk '/Requests\/sec/ {print $2}' <<<"$out"
}
# Warm both (Postgres' buffers, the processes) before anything is counted.
for side in old new; do run $side page >/dev/null; run $side cold >/dev/null; done
: >"$TMP/results"
for r in $(seq "$ROUNDS"); do
	for c in page page-gzip cold; do
		for side in old new; do
			rps="$(run $side $c)"
			echo "round $r $c $side $rps"
			echo "$c $side $rps" >>"$TMP/results"
		done
	done
done
echo
python3 - "$TMP/results" <<'PY'
import sys, statistics
res = {}
for line in open(sys.argv[1]):
    c, side, rps = line.split()
    res.setdefault(c, {}).setdefault(side, []).append(float(rps))
print(f"{'case':<10} {'old req/s':>10} {'new req/s':>10} {'new/old':>8}   (medians of the rounds)")
for c in ("page", "page-gzip", "cold"):
    o, n = statistics.median(res[c]["old"]), statistics.median(res[c]["new"])
    print(f"{c:<10} {o:>10.0f} {n:>10.0f} {n/o:>7.2f}x")
pg, p = statistics.median(res["page-gzip"]["new"]), statistics.median(res["page"]["new"])
print(f"new gzip/identity on the repeated page: {pg/p:.2f}")
PY
