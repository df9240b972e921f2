#!/usr/bin/env bash
# Full check of the repository: gofmt, go vet, staticcheck, go test -race, each package's time.
#
#   scripts/test.sh [go test flags...]      e.g. scripts/test.sh -run TestSink -v
#
# Works from any directory, as root with no stdin on a fresh Debian 12 with Go
# in /usr/local/go: it installs what the tests need (Debian's postgresql when
# no server answers and no initdb exists, gcc for the race detector) when it
# runs as root, and says what is missing otherwise.
#
# Environment:
#   HRSYNC_TEST_DATABASE_URL  Postgres admin URL for the tests (see package
#                             sink/sinktest); skips looking for a server.
#   HRSYNC_LINT_ONLY=1        stop after the static checks (make lint).
#   HRSYNC_PACKAGE_BUDGET     the most one package's tests may take (default 10m) on a
#                             machine where the calibration takes HRSYNC_BUDGET_REFERENCE
#                             (default internal/slowness.DefaultReference); scaled to this
#                             machine's calibration.
set -euo pipefail

# Staticcheck 2026.2.2, built for Go 1.26 (its go.mod says go 1.26.0).
# Newer releases: go list -m -versions honnef.co/go/tools
STATICCHECK_VERSION=v0.8.2
# gotestsum runs go test and prints a line per package and the output of what failed; its JSON
# file gives each package's time (scripts/testbudget).
GOTESTSUM_VERSION=v1.13.0
# The most one package's tests may take (docs/development.md#the-suites-time): the suite runs
# packages side by side, so the slowest is the floor of make test's time.
PACKAGE_BUDGET=${HRSYNC_PACKAGE_BUDGET:-10m}
# ... on a machine where scripts/testbudget/calibrate takes HRSYNC_BUDGET_REFERENCE, when set, or
# internal/slowness.DefaultReference (testbudget's default, and the tests'); scaled to this one's.
# Every build but the race build is a release's (CGO_ENABLED=0 and these flags, as
# internal/releasebuild, .goreleaser.yaml and deploy/Dockerfile build): go vet's, staticcheck's,
# testpg's and testbudget's here, and the tests' hrsync and the image's in deploy/check.sh. One
# compilation of every package then serves them all; each other set of flags compiles every
# package again (a minute or more of CPU on a cold cache, as CI has).
RELEASE_FLAGS=(-trimpath -tags=timetzdata)
# release CMD...: CMD (go, or a tool that runs go list) building as a release does.
release() { CGO_ENABLED=0 GOFLAGS="${RELEASE_FLAGS[*]}${GOFLAGS:+ $GOFLAGS}" "$@"; }

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each section says when it began, in seconds since the script started: where the run's time goes.
section() { printf '\n==> %s (%ds)\n' "$*" "$SECONDS"; }
die() {
	printf '\nFAIL: %s\n' "$*" >&2
	exit 1
}
is_root() { [[ $(id -u) -eq 0 ]]; }

# A Postgres server answers on 127.0.0.1:5432 or the Debian socket.
pg_answers() {
	# (Debian's pg_isready is a wrapper that fails without a client package.)
	if command -v pg_isready >/dev/null 2>&1 && pg_isready --version >/dev/null 2>&1; then
		pg_isready -q -h 127.0.0.1 -p 5432 -t 3 && return 0
		[[ -d /var/run/postgresql ]] && pg_isready -q -h /var/run/postgresql -p 5432 -t 3 && return 0
		return 1
	fi
	timeout 3 bash -c ': </dev/tcp/127.0.0.1/5432' 2>/dev/null
}

# Prints the initdb the tests would use for a throwaway cluster.
find_initdb() {
	local p
	if p=$(command -v initdb 2>/dev/null); then
		echo "$p"
		return 0
	fi
	for p in $(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V -r); do
		if [[ -x $p ]]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

apt_install() {
	echo "Installing Debian packages: $*"
	DEBIAN_FRONTEND=noninteractive apt-get update </dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" </dev/null
}

lint_only=false
[[ ${HRSYNC_LINT_ONLY:-} == 1 ]] && lint_only=true

section "Go toolchain"
export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null 2>&1 || die "go not found on PATH or in /usr/local/go/bin"
gopath=$(go env GOPATH)
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin="${gopath%%:*}/bin"
export PATH="$gobin:${gopath%%:*}/bin:$PATH"
go version
echo "repository: $PWD"

# One throwaway cluster for the whole run (sink/sinktest/cmd/testpg), when no server answers,
# rather than one per test process. testpg stops it and removes its files when its standard
# input, this script's coprocess pipe, closes: when the script ends, however it ends.
testpg_pid=
testpg_dir=
start_test_cluster() {
	testpg_dir=$(mktemp -d)
	release go build -o "$testpg_dir/testpg" ./sink/sinktest/cmd/testpg || die "could not build sink/sinktest/cmd/testpg (above)"
	# exec: the coprocess's pid is testpg's, for stop_test_cluster to signal.
	coproc TESTPG { exec "$testpg_dir/testpg"; }
	testpg_pid=$TESTPG_PID
	local url
	# initdb and the server's start are bounded by testpg; this bounds the rest.
	read -r -t 180 url <&"${TESTPG[0]}" || die "no throwaway Postgres cluster for the tests (testpg said why above)"
	export HRSYNC_TEST_DATABASE_URL=$url
	echo "Throwaway cluster for this run at $url (stopped when the script exits)."
}
stop_test_cluster() {
	[[ -n $testpg_pid ]] || return 0
	kill -TERM "$testpg_pid" 2>/dev/null || true
	wait "$testpg_pid" || echo "testpg exited with status $? stopping the throwaway cluster" >&2
	testpg_pid=
	rm -rf "$testpg_dir"
}

# What the run leaves is removed when the script exits, however it exits: the throwaway cluster,
# and the test results' JSON.
results=
cleanup() {
	stop_test_cluster
	[[ -z $results ]] || rm -rf "$results"
}
trap cleanup EXIT

if ! $lint_only; then
	section "Postgres for the tests"
	if [[ -n ${HRSYNC_TEST_DATABASE_URL:-} ]]; then
		echo "HRSYNC_TEST_DATABASE_URL is set: the tests use that server."
	elif pg_answers; then
		echo "A Postgres server answers on 127.0.0.1:5432 or in /var/run/postgresql: the tests try it first."
	elif initdb=$(find_initdb); then
		echo "No Postgres server answers: starting a throwaway cluster for the tests with $initdb."
		start_test_cluster
	elif ! is_root; then
		die "no Postgres server answers on 127.0.0.1:5432 or in /var/run/postgresql, no initdb was found (PATH, /usr/lib/postgresql/*/bin), and installing postgresql needs root. Install it, start a server, or set HRSYNC_TEST_DATABASE_URL."
	elif ! command -v apt-get >/dev/null 2>&1; then
		die "no Postgres server answers, no initdb was found, and there is no apt-get to install postgresql. Install it or set HRSYNC_TEST_DATABASE_URL."
	else
		echo "No Postgres server answers and no initdb was found: installing postgresql."
		apt_install postgresql
		initdb=$(find_initdb) || die "postgresql installed but still no initdb in /usr/lib/postgresql/*/bin"
		echo "Starting a throwaway cluster for the tests with $initdb."
		start_test_cluster
	fi

	section "C compiler for the race detector"
	cc=$(go env CC)
	if [[ $(go env CGO_ENABLED) == 1 ]] && command -v "$cc" >/dev/null 2>&1; then
		echo "cgo enabled, $cc: $(command -v "$cc")"
	elif [[ ${CGO_ENABLED:-} == 0 ]]; then
		die "CGO_ENABLED=0 is set, but go test -race needs cgo"
	elif is_root && command -v apt-get >/dev/null 2>&1; then
		echo "go test -race needs cgo and no C compiler was found: installing gcc."
		apt_install gcc libc6-dev
		if [[ $(go env CGO_ENABLED) != 1 ]] || ! command -v "$cc" >/dev/null 2>&1; then
			die "gcc installed but cgo is still unusable (go env CGO_ENABLED: $(go env CGO_ENABLED), CC: $cc); check CC and 'go env -w' settings"
		fi
	else
		die "go test -race needs cgo and a C compiler ($cc), and installing gcc needs root and apt-get"
	fi
fi

if ! $lint_only; then
	section "Chromium for the browser test"
	# TestCORSInABrowser drives Debian's headless Chromium; it fails under CI
	# or as root when there is none (it skips elsewhere, saying how to get it).
	if chromium=$(command -v chromium 2>/dev/null); then
		echo "chromium: $chromium"
	elif is_root && command -v apt-get >/dev/null 2>&1; then
		echo "No chromium found: installing Debian's chromium."
		apt_install chromium >/tmp/hrsync-apt-chromium.log 2>&1 || {
			tail -n 20 /tmp/hrsync-apt-chromium.log >&2
			die "apt-get install chromium failed (log above)"
		}
		command -v chromium >/dev/null 2>&1 || die "chromium installed but not on PATH"
	else
		echo "No chromium found and not root: TestCORSInABrowser will skip (apt-get install chromium)."
	fi
fi

if ! $lint_only; then
	section "promtool for the /metrics lint"
	# TestWorkerMetrics lints /metrics with promtool check metrics (it skips without one), and
	# deploy/check.sh tests the alert rules with it; installed here, before both start.
	[[ -x /usr/bin/promtool ]] && PATH="$PATH:/usr/bin"
	if command -v promtool >/dev/null 2>&1; then
		echo "promtool: $(command -v promtool)"
	elif is_root && command -v apt-get >/dev/null 2>&1; then
		echo "No promtool found: installing Debian's prometheus (for promtool)."
		apt_install prometheus >/tmp/hrsync-apt-prometheus.log 2>&1 || {
			tail -n 20 /tmp/hrsync-apt-prometheus.log >&2
			die "apt-get install prometheus failed (log above)"
		}
		[[ -x /usr/bin/promtool ]] && PATH="$PATH:/usr/bin"
		command -v promtool >/dev/null 2>&1 || die "prometheus installed but no promtool on PATH"
	else
		echo "No promtool found and not root: the /metrics lint and deploy/check.sh's rule tests skip (apt-get install prometheus)."
	fi
fi

section "gofmt"
# Every .go file except in hidden, _-prefixed, vendor and testdata dirs
# (the ones the go command ignores too).
if ! unformatted=$(find . -mindepth 1 \( -type d \( -name '.*' -o -name '_*' -o -name vendor -o -name testdata \) -prune \) -o \( -type f -name '*.go' -print0 \) | xargs -0 -r gofmt -l); then
	die "gofmt could not parse some files (see above)"
fi
if [[ -n $unformatted ]]; then
	printf '%s\n' "$unformatted" >&2
	die "these files need gofmt -w (listed above)"
fi
echo "ok"

# go vet, staticcheck and, for make test, deploy/check.sh. make test runs them beside the Go
# tests (their output is printed after the tests'), not before: the tests keep the two cores
# only partly busy while they wait on Postgres and processes, and these two minutes fit there.
#
# Both compile what they check as a release is built (RELEASE_FLAGS, above).
static_checks() {
	section "go vet ./..."
	release go vet ./...
	echo "ok"

	section "staticcheck $STATICCHECK_VERSION ./..."
	local sc="$gobin/staticcheck"
	# Reinstall when missing, another version, or built by another Go.
	if [[ ! -x $sc ]] || ! "$sc" -version 2>/dev/null | grep -qF "(${STATICCHECK_VERSION#v})" ||
		[[ $(go version "$sc" 2>/dev/null | awk '{print $NF}') != "$(go env GOVERSION)" ]]; then
		echo "Installing honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION into $gobin"
		GOBIN="$gobin" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
	fi
	"$sc" -version
	release "$sc" ./...
	echo "ok"

	$lint_only && return 0
	section "deploy/: Prometheus rules, dashboard, Dockerfile, compose, Kubernetes, systemd (deploy/check.sh)"
	# As root it installs its Debian tools (shellcheck, yamllint, systemd-analyze); not root, it
	# skips a check whose tool is missing, saying so. kube-score runs pinned with go run.
	bash deploy/check.sh
}

if $lint_only; then
	static_checks
	section "Static checks passed"
	exit 0
fi

section "gotestsum $GOTESTSUM_VERSION"
gts="$gobin/gotestsum"
if [[ ! -x $gts ]] || [[ $("$gts" --version 2>/dev/null) != "gotestsum version $GOTESTSUM_VERSION" ]]; then
	echo "Installing gotest.tools/gotestsum@$GOTESTSUM_VERSION into $gobin"
	GOBIN="$gobin" go install "gotest.tools/gotestsum@$GOTESTSUM_VERSION"
fi
"$gts" --version

# The race detector instruments every package but SQLite and its C runtime: modernc.org/sqlite/lib
# is SQLite's C translated to Go, modernc.org/libc the C library it calls and modernc.org/memory
# that library's allocator. Instrumenting SQLite's memory accesses made a 150-employee demo take
# 62 s of CPU instead of 8.6 s (2.3 s without the race detector at all). The C library and
# allocator were instrumented until 29 November: they cost sink a quarter of its CPU (198 s →
# 148 s) and the whole run up to a third (1,143 s → 754 s), and the memory they touch is
# SQLite's C heap, which the detector does not track; no Go code of hrsync's runs inside them (it
# registers no SQLite function or hook: sink's TestSQLiteCallsNoGoCode fails when it does). An earlier session saw races reported that were not
# there with libc left out, in sync.Map's users (encoding/json, and libopenapi, since removed),
# and guessed at a generic instance of libc's lent to sync.Map; libc's only instance of another
# package's generic type is atomic.Pointer[tzLocation], whose shape nothing else has, and a whole
# run since reported none. Should a race be reported whose stacks pass through libc or memory,
# put the two lines below back to -d=checkptr=0 (the checks of unsafe.Pointer conversions that
# -race turns on; 14 % of cmd/hrsync's CPU there) and look again.
gcflags=(-gcflags='modernc.org/sqlite/lib=-race=false'
	-gcflags='modernc.org/libc=-race=false'
	-gcflags='modernc.org/memory=-race=false')

# The budget of the slowest package is stated for a machine of a given speed and scaled to this
# one's: calibrate runs a fixed workload of the suite's kind (SQLite, JSON, goroutines), built as
# the tests are, before anything else runs beside it (docs/development.md#the-suites-time).
section "This machine's speed, for the package budget (scripts/testbudget/calibrate)"
calibration=$(go run -race "${gcflags[@]}" ./scripts/testbudget/calibrate) || die "scripts/testbudget/calibrate failed (above)"
echo "calibration: $calibration"
# The tests' bounds on a hang scale with it too (internal/slowness).
export HRSYNC_TEST_CALIBRATION="$calibration"

# A race-detecting program sleeps a second as it exits, by default, for reports still being
# written; the tests' reports are written as each test ends. Not that second in each of some 35
# test processes. (A GORACE of the caller's is kept, and wins.)
export GORACE="atexit_sleep_ms=0${GORACE:+ $GORACE}"

results=$(mktemp -d)
section "go vet, staticcheck and deploy/check.sh, beside the tests (printed after them)"
# In a subshell of its own, so that set -e stops it at the first failure and only it.
(static_checks) >"$results/static.log" 2>&1 &
static_pid=$!

# -parallel 8: most tests wait (on Postgres, a process, an upstream, a schedule) rather than
# compute, so more of them run side by side than the two cores' default of two; Postgres's
# default 100 connections hold it. Packages stay two at a time (-p): four at a time loaded the
# machine so that a worker's first sync, 5 s alone, took over 30 s, and the run was no shorter.
# -timeout: a bound on a hang, above the scaled budget on the slowest machine seen (18½–21 min;
# the budget check below names a package that is merely slow); a package past it fails with its
# stacks. A flag given wins.
#
# -vet=off: go test's own few vet checks are a subset of the go vet ./... run beside the tests,
# which would otherwise be made twice (half a minute of CPU on a cold cache).
#
# The longest packages are listed first, longest first, so that go test builds and starts them
# first: the run is as long as the longest chain of packages one slot runs, and a long package
# started last ends minutes after the rest (scripts/testbudget prints each package's time; keep
# this list to its top few).
longest=(./cmd/hrsync ./sink ./sync/walk ./source/server ./cmd/hrsync/internal/demo ./source/fakeupstream ./cmd/hrsync/internal/hrreport)
module=$(go list -m)
skip=()
for p in "${longest[@]}"; do skip+=(-e "$module/${p#./}"); done
mapfile -t rest < <(go list ./... | grep -vxF "${skip[@]}")
section "go test -race ${gcflags[*]} -vet=off -count=1 -parallel 8 -timeout 30m ${longest[*]} (the rest of ./...) $*"
status=0
"$gts" --format pkgname-and-test-fails --jsonfile "$results/test.json" -- \
	-race "${gcflags[@]}" -vet=off -count=1 -parallel 8 -timeout 30m "${longest[@]}" "${rest[@]}" "$@" || status=$?

static_status=0
wait "$static_pid" || static_status=$?
cat "$results/static.log"
[[ $static_status == 0 ]] || {
	echo "FAIL: the static checks or deploy/check.sh (above)" >&2
	status=1
}

section "Each package's time (budget $PACKAGE_BUDGET for the slowest, scaled to this machine)"
if ! release go run ./scripts/testbudget -budget "$PACKAGE_BUDGET" ${HRSYNC_BUDGET_REFERENCE:+-reference "$HRSYNC_BUDGET_REFERENCE"} -calibration "$calibration" "$results/test.json"; then
	status=1
fi
[[ $status == 0 ]] || die "go test or a static check failed, or a package passed the budget (above)"

section "All checks passed"
