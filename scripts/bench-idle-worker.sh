#!/usr/bin/env bash
# The memory of a worker whose accounts are all idle: one `hrsync run` (no --now) of N accounts,
# every schedule a year away, 2 collections each (working_patterns, employees), rate_limit 60 on
# the shared budget, no upstream (nothing is due). Prints, for each binary and each N, the
# worker's VmRSS (/proc/PID/status) 10 s after /readyz first answers 200, its goroutines and its
# hrsync_ series (from /metrics), and how long it took to be ready (every warehouse checked).
#
#   bash scripts/bench-idle-worker.sh 20,200,1000                    # this work tree's hrsync
#   bash scripts/bench-idle-worker.sh 20,200,1000 /tmp/hrsync-main   # and other builds, interleaved
#   bash scripts/bench-idle-worker.sh drop 1000                      # drop the schemas again
#   BENCH_ONBOARDING=1 bash scripts/bench-idle-worker.sh 200          # each account an empty drop folder
#
# With BENCH_ONBOARDING=1 each account also watches an empty onboarding folder of its own (polled
# every 30 s, the default), and the wait before measuring is 60 s (BENCH_WAIT sets it; 10 s
# otherwise); every run also prints the Postgres sessions the database saw established during
# that wait (pg_stat_database.sessions: other clients of the same database count too, and so may
# the script's own two psql queries).
#
# Postgres from HRSYNC_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. The
# accounts' schemas (idlebench_m0000, ...; IDLEBENCH_PREFIX names others) are migrated by the
# first run and kept for the next (`hrsync run` does not migrate): 0.3 s a schema on an empty
# server, about 2 s once it holds a thousand, so 1,000 accounts take about 20 minutes to migrate
# the first time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DB="${HRSYNC_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
PREFIX="${IDLEBENCH_PREFIX:-idlebench}" # the schemas' names: PREFIX_m0000, ...
TMP="$(mktemp -d)"
pid=
cleanup() {
	[[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if [[ "${1:-}" == drop ]]; then
	for ((i = 0; i < ${2:?how many accounts}; i++)); do
		printf 'DROP SCHEMA IF EXISTS %s_m%04d CASCADE;\n' "$PREFIX" "$i"
	done | PGOPTIONS='-c client_min_messages=warning' psql "$DB" -q
	exit 0
fi
IFS=, read -ra NS <<<"${1:?N,N,...}"
shift
BINS=("$TMP/hrsync" "$@")
(cd "$ROOT" && go build -o "$TMP/hrsync" ./cmd/hrsync)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# config N PORT: the configuration of N idle accounts, metrics on PORT.
config() {
	cat <<EOF
warehouse: {url: "$DB"}
source: {rate_limit: 60}
sync: {resources: [working_patterns, employees]}
schedule: '0 0 1 1 *'
worker: {max_syncs: 10}
metrics: {addr: "127.0.0.1:$2"}
log: {level: warn}
accounts:
EOF
	for ((i = 0; i < $1; i++)); do
		folder=
		if [[ -n "${BENCH_ONBOARDING:-}" ]]; then
			mkdir -p "$TMP/drop/m$(printf %04d "$i")"
			folder=$(printf ', onboarding: {dir: "%s/drop/m%04d"}' "$TMP" "$i")
		fi
		printf '  - {name: m%04d, source: {url: "http://127.0.0.1:1/m%04d", api_key: km%04d}, warehouse: {schema: %s_m%04d}%s}\n' "$i" "$i" "$i" "$PREFIX" "$i" "$folder"
	done
}
WAIT="${BENCH_WAIT:-10}"
[[ -n "${BENCH_ONBOARDING:-}" && -z "${BENCH_WAIT:-}" ]] && WAIT=60
# sessions: how many sessions the database has seen established (PostgreSQL 14 and later).
sessions() { psql "$DB" -Atc 'SELECT sessions FROM pg_stat_database WHERE datname = current_database()'; }

for n in "${NS[@]}"; do
	config "$n" 0 >"$TMP/migrate.yaml"
	"$TMP/hrsync" --config "$TMP/migrate.yaml" migrate >/dev/null
	for bin in "${BINS[@]}"; do
		port=$(free_port)
		config "$n" "$port" >"$TMP/run.yaml"
		start=$(date +%s.%N)
		"$bin" --config "$TMP/run.yaml" run 2>"$TMP/run.log" &
		pid=$!
		until [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" == 200 ]]; do
			kill -0 "$pid" 2>/dev/null || { cat "$TMP/run.log" >&2; exit 1; }
			sleep 0.2
		done
		ready=$(echo "$(date +%s.%N) - $start" | bc)
		before=$(sessions)
		sleep "$WAIT"
		opened=$(($(sessions) - before)) # the script's own psql sessions may count one or two
		rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
		page="$(curl -s "http://127.0.0.1:$port/metrics")"
		printf '%s\taccounts=%d\trss=%.1fMB\tgoroutines=%s\thrsync_series=%d\tready=%.1fs\tsessions_opened_in_%ss=%d\n' "$bin" "$n" "$(echo "$rss / 1024" | bc -l)" \
			"$(awk '/^go_goroutines/ {print $2}' <<<"$page")" "$(grep -c '^hrsync_' <<<"$page")" "$ready" "$WAIT" "$opened"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		pid=
	done
done
