#!/usr/bin/env bash
# hrsync serve against the replica a data team would hand-write (issue 26), side by side in one
# run. The replica is scripts/peer/app.py: Flask + psycopg2 (a connection pool per worker) under
# gunicorn, reading the same warehouse tables and joins. The script builds hrsync and the fake
# upstream from the work tree, syncs 20,000 employees into a Postgres warehouse as
# scripts/bench-serve.sh does, waits for autovacuum to analyze it (statistics as autovacuum leaves
# them: no ANALYZE by hand), starts three servers on it
#   cache     hrsync serve, the answer cache on (its default size)
#   nocache   hrsync serve, serve.cache_bytes: 0 (HRSYNC_SERVE_CACHE_BYTES=0)
#   peer      gunicorn, gthread, 2 x cores + 1 workers (PEER_WORKERS), PEER_THREADS threads each
# checks that page 1 and a later page of hrsync and of the peer are the same records, and loads
# each with wrk (8 connections, BENCH_CONNECTIONS, 1 thread), interleaved cache, nocache, peer, round after round, for:
#   cold      every request a 100-record (91 to 100) page the server has not just answered:
#             page 1 to the last full page of per_page 100, 99 … 91 in turn (about 2,100
#             answers, more than the answer cache keeps), each run of a server going on where
#             its last stopped, so each is a miss; the cache's hit counter during the cold
#             runs is printed to show it
#   page1     /v1/employees?page=1&per_page=100 repeated
# and prints each run's requests/s, then a table (medians of the rounds) with the ratios
# hrsync/peer, ready to paste into docs/benchmarks.md. Exits non-zero on a setup failure or when
# the answers differ; exits 0 with a SKIPPED line when the peer's Python packages cannot be had.
#
#   bash scripts/bench-serve-peer.sh      # BENCH_SECONDS=10 BENCH_ROUNDS=3 by default
#
# Postgres (BENCH_PG):
#   auto     (default) the server of HRSYNC_TEST_DATABASE_URL, else
#            postgres://postgres@127.0.0.1:5432/postgres, as bench-serve.sh, when it runs
#            autovacuum; when it does not (a CI server may turn it off), a private one as below
#   shared   that server, whatever its settings
#   private  a throwaway cluster of the installed PostgreSQL on its default settings (initdb,
#            pg_ctl; as the postgres user when run as root), on a free port, removed at exit
# BENCH_CONNECTIONS=8: wrk's connections (1: the database's time per page without statements
#   queued behind each other on the cores).
# BENCH_PIN=1 (with BENCH_PG=private, on 2 or more CPUs): the private Postgres on CPU 0, the
#   servers, the peer and wrk on the others (taskset), so that the database's time per page is
#   not time its backends waited for a core the load generator or a server held.
# BENCH_ANALYZE_WAIT=300: at most these seconds waited for autovacuum's analyze of employees.
# BENCH_BEFORE=<git revision>: also serve, cache off, the hrsync built from that revision
#   (side "before", in every round beside the others), to compare a change with its base in
#   one run.
#
# Each server connects as its own role (hr_cache, hr_nocache, hr_before, peer), so that on a
# private server (which loads pg_stat_statements) the script also prints each one's database
# time per page statement (mean_exec_time: the executor, sending the rows included) against
# the statement executed alone (EXPLAIN ANALYZE of hrsync's prepared page 1, generic plan; with
# BENCH_BEFORE, before's own statement too, each server's time against its own statement).
#
# The peer's packages come from Debian only (python3-flask, python3-psycopg2, gunicorn), run by
# /usr/bin/python3; as root the script installs them with apt-get when missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH="${BENCH_SECONDS:-10}"
ROUNDS="${BENCH_ROUNDS:-3}"
CONNS="${BENCH_CONNECTIONS:-8}"
PG_MODE="${BENCH_PG:-auto}"
ANALYZE_WAIT="${BENCH_ANALYZE_WAIT:-300}"
NCPU="$(nproc)"
PIN_DB=() PIN_APP=()
if [ "${BENCH_PIN:-}" = 1 ]; then
	[ "$PG_MODE" = private ] || { echo "bench-serve-peer: BENCH_PIN=1 needs BENCH_PG=private (a server of its own to pin)" >&2; exit 2; }
	[ "$NCPU" -ge 2 ] || { echo "bench-serve-peer: BENCH_PIN=1 needs 2 CPUs or more" >&2; exit 2; }
	command -v taskset >/dev/null || { echo "bench-serve-peer: BENCH_PIN=1 needs taskset (util-linux)" >&2; exit 2; }
	PIN_DB=(taskset -c 0) PIN_APP=(taskset -c "1-$((NCPU - 1))")
fi
PEER_WORKERS="${PEER_WORKERS:-$((2 * NCPU + 1))}"
PEER_THREADS="${PEER_THREADS:-2}"
PY=/usr/bin/python3
EMPLOYEES=20000
TMP="$(mktemp -d)"
PGDATA=
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${ADMIN:-}" ] && [ -n "${DBNAME:-}" ]; then
		psql "$ADMIN" -qc "DROP DATABASE IF EXISTS $DBNAME" >/dev/null 2>&1 || true
	fi
	if [ -n "$PGDATA" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1 || true
		rm -rf "$PGDATA"
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "bench-serve-peer: $*" >&2; exit 1; }
skip() { echo "bench-serve-peer: SKIPPED: $*"; exit 0; }
# as_pg runs a command as the postgres user when root (initdb and postgres refuse root).
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1; }
}

command -v psql >/dev/null || fail "needs psql"
command -v curl >/dev/null || fail "needs curl"
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || fail "needs Go (PATH or /usr/local/go/bin)"
[ -x "$PY" ] || skip "no $PY (the peer runs on the system Python, with Debian's packages)"
if ! "$PY" -c 'import flask, psycopg2, gunicorn' 2>/dev/null; then
	apt_install python3-flask python3-psycopg2 gunicorn ||
		skip "the peer needs python3-flask, python3-psycopg2 and gunicorn (apt-get install -y python3-flask python3-psycopg2 gunicorn, as root)"
	"$PY" -c 'import flask, psycopg2, gunicorn' 2>/dev/null || skip "python3-flask, python3-psycopg2 or gunicorn installed but not importable by $PY"
fi
command -v wrk >/dev/null || apt_install wrk || fail "cannot install wrk (apt-get install -y wrk, as root)"

# The Postgres server.
SHARED="${HRSYNC_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
case "$PG_MODE" in
auto)
	if [ "$(psql "$SHARED" -Atc 'SHOW autovacuum' 2>/dev/null)" = on ]; then PG_MODE=shared; else
		echo "bench-serve-peer: the server of $SHARED does not run autovacuum (or does not answer): a private one on default settings instead (BENCH_PG=shared to use it anyway)"
		PG_MODE=private
	fi ;;
shared | private) ;;
*) fail "BENCH_PG is auto, shared or private, not $PG_MODE" ;;
esac
if [ "$PG_MODE" = private ]; then
	PGBIN="$(find /usr/lib/postgresql/*/bin -maxdepth 0 2>/dev/null | sort -V | tail -n 1)"
	[ -x "$PGBIN/initdb" ] || fail "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)"
	PGDATA="$(mktemp -d /tmp/bench-serve-peer-pg.XXXXXX)"
	[ "$(id -u)" = 0 ] && chown postgres: "$PGDATA"
	as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust >"$TMP/initdb.out" 2>&1 || fail "initdb: $(tail -n 3 "$TMP/initdb.out")"
	PGPORT="$(free_port)"
	as_pg "${PIN_DB[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w \
		-o "-p $PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$PGDATA -c shared_preload_libraries=pg_stat_statements -c track_activity_query_size=65536" start >/dev/null ||
		fail "cannot start a private Postgres: $(tail -n 3 "$PGDATA/server.log")"
	ADMIN="postgres://postgres@127.0.0.1:$PGPORT/postgres?sslmode=disable"
else
	ADMIN="$SHARED"
fi
DBNAME="bench_peer_$$"
DB="$("$PY" -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/"+sys.argv[2])))' "$ADMIN" "$DBNAME")"

cd "$ROOT"
go build -o "$TMP/hrsync" ./cmd/hrsync || fail "cannot build the work tree"
go build -o "$TMP/fakeupstream" ./source/fakeupstream/cmd/fakeupstream || fail "cannot build the fake upstream"
SIDES="cache nocache peer"
if [ -n "${BENCH_BEFORE:-}" ]; then
	BEFORE_REV="$(git rev-parse --short "$BENCH_BEFORE")" || fail "BENCH_BEFORE: no revision $BENCH_BEFORE"
	mkdir "$TMP/before-src"
	git archive "$BEFORE_REV" | tar -x -C "$TMP/before-src" || fail "cannot export $BEFORE_REV"
	(cd "$TMP/before-src" && go build -o "$TMP/hrsync-before" ./cmd/hrsync) || fail "cannot build $BEFORE_REV"
	SIDES="cache nocache before peer"
fi

# The binaries run where no config.yaml is: settings come from the environment.
cd "$TMP"
UP="127.0.0.1:$(free_port)"
"$TMP/fakeupstream" -addr "$UP" -employees "$EMPLOYEES" >"$TMP/up.out" 2>"$TMP/up.err" &
pids+=($!)
UPKEY=
for _ in $(seq 100); do
	UPKEY="$(sed -n 's/^HRSYNC_SOURCE_API_KEY=//p' "$TMP/up.out")"
	[ -n "$UPKEY" ] && break
	sleep 0.1
done
[ -n "$UPKEY" ] || fail "the fake upstream did not start: $(cat "$TMP/up.err")"

psql "$ADMIN" -qc "CREATE DATABASE $DBNAME" >/dev/null || fail "cannot create database $DBNAME"
export HRSYNC_SOURCE_URL="http://$UP" HRSYNC_SOURCE_API_KEY="$UPKEY" HRSYNC_SOURCE_RATE_LIMIT=0
export HRSYNC_WAREHOUSE_URL="$DB" HRSYNC_WAREHOUSE_SCHEMA=hr HRSYNC_SYNC_RESOURCES=working_patterns,employees
"$TMP/hrsync" migrate >/dev/null 2>"$TMP/migrate.err" || fail "migrate: $(tail -n 1 "$TMP/migrate.err")"
"$TMP/hrsync" sync >/dev/null 2>"$TMP/sync.err" || fail "sync: $(tail -n 3 "$TMP/sync.err")"
n="$(psql "$DB" -Atc "SELECT count(*) FROM hr.employees")" || fail "cannot count employees"
[ "$n" -ge "$EMPLOYEES" ] || fail "the warehouse holds $n employees, want $EMPLOYEES"
kill "${pids[0]}" 2>/dev/null || true

# Statistics as autovacuum leaves them: wait (bounded) for its analyze of employees, the table
# every page reads, so that every round runs on the same plans; never ANALYZE by hand.
autovacuum="$(psql "$DB" -Atc 'SHOW autovacuum')"
waited=0
if [ "$autovacuum" = on ]; then
	while [ "$waited" -lt "$ANALYZE_WAIT" ]; do
		[ "$(psql "$DB" -Atc "SELECT last_autoanalyze IS NOT NULL FROM pg_stat_user_tables WHERE relid = 'hr.employees'::regclass")" = t ] && break
		sleep 5
		waited=$((waited + 5))
	done
fi
STATS="$(psql "$DB" -Atc "SELECT string_agg(relname || ' ' || CASE WHEN last_autoanalyze IS NULL THEN 'never' ELSE 'yes' END, ', ' ORDER BY relname)
FROM pg_stat_user_tables WHERE schemaname = 'hr' AND relname IN
('employees','working_patterns','holiday_allowances','departments','divisions','locations','meta')")"

# One role a server, so that pg_stat_statements tells their statements apart.
for role in hr_cache hr_nocache hr_before peer; do
	psql "$ADMIN" -qc "CREATE ROLE $role LOGIN SUPERUSER" >/dev/null 2>&1 || true
done
as_role() { "$PY" -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); h=p.netloc.rsplit("@",1)[-1]; print(u.urlunsplit(p._replace(netloc=sys.argv[2]+"@"+h)))' "$DB" "$1"; }
PGSS=
if [ "$PG_MODE" = private ] && psql "$DB" -qc 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null 2>&1; then PGSS=1; fi

KEY=bench-key-4f9a0c7e2b1d8e6f3a5c9b0d
CACHE_ADDR="127.0.0.1:$(free_port)"
CACHE_METRICS="127.0.0.1:$(free_port)"
NOCACHE_ADDR="127.0.0.1:$(free_port)"
BEFORE_ADDR="127.0.0.1:$(free_port)"
PEER_ADDR="127.0.0.1:$(free_port)"
HRSYNC_WAREHOUSE_URL="$(as_role hr_cache)" HRSYNC_SERVE_API_KEYS=$KEY HRSYNC_METRICS_ADDR=$CACHE_METRICS "${PIN_APP[@]}" "$TMP/hrsync" serve --addr "$CACHE_ADDR" 2>"$TMP/cache.err" &
pids+=($!)
HRSYNC_WAREHOUSE_URL="$(as_role hr_nocache)" HRSYNC_SERVE_API_KEYS=$KEY HRSYNC_SERVE_CACHE_BYTES=0 "${PIN_APP[@]}" "$TMP/hrsync" serve --addr "$NOCACHE_ADDR" 2>"$TMP/nocache.err" &
pids+=($!)
if [ -n "${BEFORE_REV:-}" ]; then
	HRSYNC_WAREHOUSE_URL="$(as_role hr_before)" HRSYNC_SERVE_API_KEYS=$KEY HRSYNC_SERVE_CACHE_BYTES=0 "${PIN_APP[@]}" "$TMP/hrsync-before" serve --addr "$BEFORE_ADDR" 2>"$TMP/before.err" &
	pids+=($!)
fi
PEER_DATABASE_URL="$(as_role peer)" PEER_SCHEMA=hr PEER_API_KEY=$KEY PEER_POOL_MAX="$PEER_THREADS" \
	"${PIN_APP[@]}" "$PY" -m gunicorn --chdir "$ROOT/scripts/peer" --bind "$PEER_ADDR" \
	--worker-class gthread --workers "$PEER_WORKERS" --threads "$PEER_THREADS" app:app 2>"$TMP/peer.err" &
pids+=($!)

addr_of() {
	case "$1" in
	cache) echo "$CACHE_ADDR" ;;
	nocache) echo "$NOCACHE_ADDR" ;;
	before) echo "$BEFORE_ADDR" ;;
	peer) echo "$PEER_ADDR" ;;
	esac
}
# Each server's first request is page 1, as every client's is: which plan a pooled Postgres
# connection settles on can depend on its first executions.
PAGE1="/v1/employees?page=1&per_page=100"
for side in $SIDES; do
	ok=
	for _ in $(seq 150); do
		if [ "$(curl -s -o "$TMP/page1-$side.json" -D "$TMP/page1-$side.h" -w '%{http_code}' -H "X-API-KEY: $KEY" "http://$(addr_of $side)$PAGE1")" = 200 ]; then ok=1; break; fi
		sleep 0.2
	done
	[ -n "$ok" ] || fail "$side did not answer: $(tail -n 3 "$TMP/$side.err")"
done
LATER="/v1/employees?page=137&per_page=93"
for side in $SIDES; do
	[ "$side" = cache ] && continue
	curl -sf -o "$TMP/later-$side.json" -D "$TMP/later-$side.h" -H "X-API-KEY: $KEY" "http://$(addr_of $side)$LATER" || fail "$side: $LATER failed"
done

# The same records: ids in order, Total, the last page's number, and the fields both build from
# the same columns and joins (hrsync gives back what the source sent, the peer its typed
# columns: values are compared as the warehouse keeps them: timestamps as instants, ids as
# numbers, "" as null).
"$PY" - "$TMP" <<'PY' || fail "hrsync and the peer answer different records (above)"
import json, re, sys, datetime
tmp = sys.argv[1]

def load(name):
    body = json.load(open(f"{tmp}/{name}.json"))["employees"]
    heads = {}
    for line in open(f"{tmp}/{name}.h", encoding="latin-1"):
        if ":" in line:
            k, v = line.split(":", 1)
            heads[k.strip().lower()] = v.strip()
    last = re.search(r'[?&]page=(\d+)[^>]*>; rel="last"', heads.get("link", ""))
    return body, heads.get("total"), last and last.group(1)

def num(v):
    return None if v is None else int(v)

def instant(v):
    return None if v is None else datetime.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()

def ref_id(v):
    return None if not isinstance(v, dict) else num(v.get("id"))

def join_date(e):
    # Some records of the source name it join_date, in YYYY/MM/DD (the create's input form);
    # the warehouse's column is company_join_date either way.
    d = e.get("company_join_date") or e.get("join_date")
    return None if d is None else d.replace("/", "-")

def text(v):
    # The warehouse's text columns keep "" as null.
    return v or None

def key(e):
    return (
        num(e["id"]), num(e.get("account_id")), *(text(e.get(f)) for f in ("first_name", "last_name", "email", "job_title", "status")),
        join_date(e), e.get("job_start_date"),
        num(e.get("length_of_service_in_months")), e.get("receives_statutory_holidays"), e.get("hr"),
        instant(e.get("created_at")), instant(e.get("updated_at")),
        ref_id(e.get("working_pattern")), ref_id(e.get("holiday_allowance")), ref_id(e.get("department")),
        (e.get("department") or {}).get("name"), (e.get("working_pattern") or {}).get("name"),
        ref_id(e.get("line_manager")), ref_id(e.get("holiday_approver")),
    )

bad = 0
pairs = [("page1-cache", "page1-peer"), ("page1-nocache", "page1-peer"), ("later-nocache", "later-peer")]
import os
if os.path.exists(f"{tmp}/page1-before.json"):
    # The change serves the same bytes as its base.
    for name in ("page1", "later"):
        if open(f"{tmp}/{name}-before.json", "rb").read() != open(f"{tmp}/{name}-nocache.json", "rb").read():
            print(f"{name}: the work tree and BENCH_BEFORE answer different bytes"); sys.exit(1)
        print(f"same bytes: {name}-nocache and {name}-before")
for a, b in pairs:
    ra, ta, la = load(a)
    rb, tb, lb = load(b)
    if len(ra) == 0 or [e["id"] for e in ra] != [e["id"] for e in rb]:
        print(f"{a} and {b}: ids differ ({len(ra)} and {len(rb)} records)"); bad += 1; continue
    if (ta, la) != (tb, lb):
        print(f"{a} and {b}: Total {ta} and {tb}, last page {la} and {lb}"); bad += 1
    for x, y in zip(ra, rb):
        if key(x) != key(y):
            print(f"{a} and {b}: employee {x['id']} differs:\n  {key(x)}\n  {key(y)}"); bad += 1; break
    else:
        print(f"same records: {a} and {b}: {len(ra)} employees, Total {ta}, last page {la}")
sys.exit(1 if bad else 0)
PY

N="$(sed -n 's/^[Tt]otal: *\([0-9]*\).*/\1/p' "$TMP/page1-peer.h")"
cat >"$TMP/cold.lua" <<'LUA'
-- Every request a full page of 100, 99 … 91 records, in turn: page 1 to the last full page of
-- per_page 100, then of 99, … , 91 (args: the employees, the position to start at), then again.
-- About 2,100 answers of ~85 KB: more than the answer cache's default 64 MiB keeps (~750), so
-- an answer has left it before it is asked again.
local pages = {}
local n = 1
init = function(args)
	local total = tonumber(args[1])
	for size = 100, 91, -1 do
		for p = 1, math.floor(total / size) do
			pages[#pages + 1] = "/v1/employees?page=" .. p .. "&per_page=" .. size
		end
	end
	n = tonumber(args[2]) % #pages
end
request = function()
	n = n % #pages + 1
	return wrk.format("GET", pages[n])
end
LUA
# run <side> <case>: requests/s of one wrk run. A side's cold run starts where its last one
# stopped (kept in a file: run is called in a subshell), so that the answers it asks first are
# not those its previous run left in the cache.
run() {
	local addr extra=() at=0
	addr="$(addr_of "$1")"
	case "$2" in
	page1) extra=("http://$addr$PAGE1") ;;
	cold)
		[ -f "$TMP/cold-at-$1" ] && at="$(cat "$TMP/cold-at-$1")"
		extra=(-s "$TMP/cold.lua" "http://$addr/" -- "$N" "$at")
		;;
	esac
	local out
	out="$("${PIN_APP[@]}" wrk -t1 -c"$CONNS" -d"${SECONDS_EACH}s" -H "X-API-KEY: $KEY" "${extra[@]}")" || fail "wrk: $out"
	if grep -q "Non-2xx" <<<"$out"; then fail "$1 $2: non-2xx answers: $out"; fi
	if [ "$2" = cold ]; then
		echo $((at + $(awk '/ requests in / {print $1}' <<<"$out"))) >"$TMP/cold-at-$1"
	fi
	awk '/Requests\/sec/ {print $2}' <<<"$out"
}
cache_counts() {
	curl -s "http://$CACHE_METRICS/metrics" | awk '/^hrsync_serve_cache_hits_total/ {h+=$2} /^hrsync_serve_cache_misses_total/ {m+=$2} END {print h+0, m+0}'
}

echo "revision: work tree at $(git -C "$ROOT" log --oneline -1 HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo ' (with changes)')"
echo "machine: $NCPU CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "postgres: $(psql "$DB" -Atc 'SHOW server_version') ($PG_MODE server), autovacuum $autovacuum; autoanalyzed: $STATS (waited ${waited}s)"
echo "warehouse: $n employees, database $DBNAME, schema hr"
echo "peer: gunicorn $("$PY" -c 'import gunicorn; print(gunicorn.__version__)') gthread, $PEER_WORKERS workers x $PEER_THREADS threads, Flask $("$PY" -c 'import importlib.metadata as m; print(m.version("flask"))'), psycopg2 $("$PY" -c 'import psycopg2; print(psycopg2.__version__.split()[0])'), Python $("$PY" -c 'import platform; print(platform.python_version())')"
[ -n "${BEFORE_REV:-}" ] && echo "before: $(git -C "$ROOT" log --oneline -1 "$BEFORE_REV"), cache off"
echo "load: wrk -t1 -c$CONNS -d${SECONDS_EACH}s, $ROUNDS rounds, interleaved $SIDES${PIN_APP[*]:+; Postgres pinned to CPU 0, servers, peer and wrk to ${PIN_APP[2]}}"
for side in $SIDES; do
	echo "bytes of page 1 ($side): $(wc -c <"$TMP/page1-$side.json")"
done
echo

# Warm all three (Postgres' buffers, the processes, the peer's workers) before anything counts.
for side in $SIDES; do run $side page1 >/dev/null; run $side cold >/dev/null; done
[ -n "$PGSS" ] && psql "$DB" -qAtc 'SELECT pg_stat_statements_reset()' >/dev/null
: >"$TMP/results"
cold_hits=0 cold_misses=0
for r in $(seq "$ROUNDS"); do
	for c in cold page1; do
		for side in $SIDES; do
			[ "$side" = cache ] && read -r h0 m0 < <(cache_counts)
			rps="$(run $side $c)"
			if [ -n "$PGSS" ] && { [ "$side" = nocache ] || [ "$side" = before ]; } && [ ! -s "$TMP/page-$side.sql" ]; then
				# The page statement as serve sent it (pg_stat_statements' text has its
				# constants as $n): the last one of a session of the cache-off server (and of
				# before's), read while its sessions are open.
				psql "$DB" -qAtc "SELECT query FROM pg_stat_activity WHERE usename = 'hr_$side' AND query LIKE '%employees_total FROM meta)%BETWEEN%' LIMIT 1" >"$TMP/page-$side.sql" || true
			fi
			if [ "$side" = cache ] && [ "$c" = cold ]; then
				read -r h1 m1 < <(cache_counts)
				cold_hits=$((cold_hits + h1 - h0)) cold_misses=$((cold_misses + m1 - m0))
			fi
			echo "round $r $c $side $rps"
			echo "$c $side $rps" >>"$TMP/results"
		done
	done
done
echo
echo "answer cache during the cold runs: $cold_hits hits, $cold_misses misses"
if [ $((cold_hits * 20)) -gt $((cold_hits + cold_misses)) ]; then
	echo "WARNING: over 5% of the cache's cold requests were hits: its cold figure is not that of a cold page"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$PGSS" ]; then
	# The database's time per page statement, by server (all rounds, cold and page 1), and
	# hrsync's page statement executed alone: prepared as serve prepares it (generic plan),
	# page 1 of 100, EXPLAIN ANALYZE without per-node timing, the median of 21 runs.
	echo
	echo "database time per page statement (pg_stat_statements, all the rounds):"
	psql "$DB" -qAtF ' ' -c "SELECT r.rolname, s.calls, round(s.mean_exec_time::numeric, 3), round(s.stddev_exec_time::numeric, 3), s.rows / greatest(s.calls, 1)
FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
WHERE s.calls > 50 AND (s.query LIKE '%employees_total FROM meta)%BETWEEN%' OR s.query LIKE '%WITH page AS%')
ORDER BY r.rolname" | while read -r role calls mean sd rows; do
		echo "  $role: $calls calls, mean $mean ms (sd $sd), $rows rows a call"
		echo "$role $mean" >>"$TMP/dbtime"
	done
	# page_prelude: psql input preparing $PAGE_Q as "page" on hrsync's session settings, with
	# :lo and :hi the first page's ids. median: the median of the numbers on its input.
	page_prelude() {
		echo "SET search_path = hr; SET plan_cache_mode = force_generic_plan;"
		echo "PREPARE page AS $PAGE_Q;"
		echo "SELECT min(id) AS lo, max(id) AS hi FROM (SELECT id FROM employees WHERE listed AND deleted_at IS NULL ORDER BY id LIMIT 100) p \gset"
	}
	median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
	# Each hrsync's own statement (the cache-on server runs the cache-off one's; before, its
	# own when BENCH_BEFORE is set).
	for side in nocache before; do
		PAGE_Q="$(cat "$TMP/page-$side.sql" 2>/dev/null || true)"
		[ -n "$PAGE_Q" ] || continue
		{
			page_prelude
			for _ in $(seq 21); do echo "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY) EXECUTE page(:lo, :hi, 100);"; done
		} | psql "$DB" -qAt 2>&1 | sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p' | median >"$TMP/alone-$side"
		echo "$side's page statement executed alone (EXPLAIN ANALYZE, median of 21): $(cat "$TMP/alone-$side") ms"
		# The same, its rows sent: psql's round trip (\timing) of the prepared page, the rows
		# read by psql and thrown away, median of 21.
		{
			page_prelude
			echo "EXECUTE page(:lo, :hi, 100) \g /dev/null"
			echo "\timing on"
			for _ in $(seq 21); do echo "EXECUTE page(:lo, :hi, 100) \g /dev/null"; done
		} | psql "$DB" -qAt 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | median >"$TMP/sent-$side"
		echo "$side's page statement alone, its rows sent to psql (round trip, median of 21): $(cat "$TMP/sent-$side") ms"
		roles="hr_cache hr_nocache"
		[ "$side" = before ] && roles=hr_before
		awk -v alone="$(cat "$TMP/alone-$side")" -v roles=" $roles " 'index(roles, " " $1 " ") && alone > 0 {printf "  %s: database time / statement alone = %.2f\n", $1, $2 / alone}' "$TMP/dbtime"
	done
fi
echo
"$PY" - "$TMP/results" <<'PY'
import sys, statistics
res = {}
for line in open(sys.argv[1]):
    c, side, rps = line.split()
    res.setdefault(c, {}).setdefault(side, []).append(float(rps))
print("| case | hrsync, cache on | hrsync, cache off | peer | cache on / peer | cache off / peer |")
print("|---|---:|---:|---:|---:|---:|")
names = {"cold": "cold 100-record page (91–100)", "page1": "page 1 repeated (100 records)"}
for c in ("cold", "page1"):
    m = {s: statistics.median(v) for s, v in res[c].items()}
    print(f"| {names[c]} | {m['cache']:.0f} | {m['nocache']:.0f} | {m['peer']:.0f} | "
          f"**{m['cache'] / m['peer']:.2f}×** | **{m['nocache'] / m['peer']:.2f}×** |")
if "before" in res["cold"]:
    print("\n| case | before, cache off | after, cache off | peer | before / peer | after / peer |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in ("cold", "page1"):
        m = {s: statistics.median(v) for s, v in res[c].items()}
        print(f"| {names[c]} | {m['before']:.0f} | {m['nocache']:.0f} | {m['peer']:.0f} | "
              f"{m['before'] / m['peer']:.2f}× | **{m['nocache'] / m['peer']:.2f}×** |")
print("\nrequests/s, medians of the rounds")
PY
