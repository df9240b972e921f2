#!/usr/bin/env bash
# Validates the operations kit in deploy/: the Prometheus rules, their unit tests and config,
# the Grafana dashboard, and the deployment kit: the Dockerfile and .dockerignore, the compose
# file, the Kubernetes manifests and the systemd unit. Works from any directory, needs no input,
# and exits non-zero when any check fails (after running all of them). Nothing here needs a
# Docker engine, a Kubernetes cluster or systemd as PID 1; what that leaves unchecked is printed.
#
#   bash deploy/check.sh
#
# Generic checks are well-kept tools': promtool (Debian's prometheus), yamllint, shellcheck and
# systemd-analyze (Debian), kube-score (Go module, pinned, go run), and, inside
# scripts/deploycheck, BuildKit's Dockerfile rules, compose-go, k8s.io/api's strict decoding and
# k8s.io/pod-security-admission. scripts/deploycheck (its own module, with its tests) keeps only
# what is hrsync's: its command lines, HRSYNC_* variables, configuration keys, ports, paths,
# probes and stop times, consistent with the binary.
#
# As root, missing Debian packages (prometheus for promtool, which on a host running systemd
# also enables a Prometheus service on :9090; shellcheck, yamllint, systemd) are
# installed with apt-get; otherwise each check whose tool is missing is skipped with a line
# saying how to install it. Needs Go (PATH or /usr/local/go/bin).
#
# Optional: HRSYNC_CHECK_METRICS_URL=http://127.0.0.1:9464/metrics (a running `hrsync run`)
# also lints that endpoint with `promtool check metrics` and checks that it exports the metrics
# the rules and the dashboard use.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPLOY="$ROOT/deploy"
RULES="$DEPLOY/prometheus/alerts.yml"
TESTS="$DEPLOY/prometheus/alerts_test.yml"
CONFIG="$DEPLOY/prometheus/prometheus.yml"
DASHBOARD="$DEPLOY/grafana/hrsync-dashboard.json"
DOCS="$ROOT/docs/operations.md"

# The metric contract: every hrsync_* name the kit may use (histograms add _bucket, _sum and
# _count). Keep in step with docs/operations.md and the code (cmd/hrsync's
# TestMetricTablesMatchTheCode compares the three).
CONTRACT=(
	hrsync_sync_runs_total
	hrsync_sync_duration_seconds
	hrsync_sync_records_total
	hrsync_sync_last_success_timestamp_seconds
	hrsync_sync_resource_configured
	hrsync_sync_walk_inconsistencies_total
	hrsync_sync_deletions_refused_total
	hrsync_load_held
	hrsync_sync_skipped_total
	hrsync_job_panics_total
	hrsync_job_runs_total
	hrsync_job_duration_seconds
	hrsync_job_last_success_timestamp_seconds
	hrsync_job_next_run_timestamp_seconds
	hrsync_source_requests_total
	hrsync_source_retries_total
	hrsync_source_rate_limit_wait_seconds_total
	hrsync_source_budget_wait_seconds_total
	hrsync_source_budget_granted_total
	hrsync_onboarding_rows_total
	hrsync_onboarding_files_total
	hrsync_onboarding_notifications_total
	hrsync_retention_erased_total
	hrsync_retention_files_deleted_total
	hrsync_retention_last_success_timestamp_seconds
	hrsync_serve_requests_total
	hrsync_serve_request_duration_seconds
	hrsync_serve_cache_hits_total
	hrsync_serve_cache_misses_total
	hrsync_serve_cache_bytes
	hrsync_serve_tls_cert_expiry_timestamp_seconds
	hrsync_build_info
	hrsync_events_held
	hrsync_webhook_deliveries_total
	hrsync_webhook_pending
	hrsync_webhook_oldest_pending_seconds
	hrsync_webhook_dead
)

# kube-score, run with go run from the Go module proxy. Newer: go list -m -versions github.com/zegl/kube-score
KUBE_SCORE_VERSION=v1.20.0

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

failures=()
section() { printf '\n==> %s\n' "$*"; }
pass() { printf -- '--- ok: %s\n' "$*"; }
skipped=0
skip() {
	printf -- '--- SKIPPED: %s\n' "$*"
	skipped=$((skipped + 1))
}
fail() {
	printf -- '--- FAILED: %s\n' "$*" >&2
	failures+=("$*")
}
# apt_install PKG...: as root, with Debian's apt (apt-get update first when PKG has no candidate).
apt_install() {
	[[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1 || return 1
	local c
	c="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
	if [[ -z "$c" || "$c" == "(none)" ]]; then
		apt-get update </dev/null >/dev/null || true
	fi
	echo "installing Debian packages: $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" </dev/null >"$TMP/apt.log" 2>&1 || {
		tail -n 20 "$TMP/apt.log"
		return 1
	}
}

# need_tool CMD PKG: CMD is on PATH, installing Debian's PKG first when root; else says so.
need_tool() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		apt_install "$2" && command -v "$1" >/dev/null 2>&1 && return 0
		fail "apt-get install $2 did not give $1"
		return 1
	fi
	skip "$1 not found and not root to install it (Debian: apt-get install $2)"
	return 1
}

# ---------------------------------------------------------------------------------------------
section "promtool"
# Debian's prometheus package ships promtool in /usr/bin (not always on a root PATH).
[[ -x /usr/bin/promtool ]] && PATH="$PATH:/usr/bin"
PROMTOOL=""
if need_tool promtool prometheus; then
	PROMTOOL="$(command -v promtool)"
	pass "$("$PROMTOOL" --version 2>&1 | head -n 1) at $PROMTOOL"
fi
have_promtool() { [[ -n "$PROMTOOL" ]]; }

# ---------------------------------------------------------------------------------------------
section "promtool check rules deploy/prometheus/alerts.yml"
if have_promtool; then
	if "$PROMTOOL" check rules "$RULES"; then pass "alert rules"; else fail "promtool check rules"; fi
fi

# ---------------------------------------------------------------------------------------------
section "promtool test rules deploy/prometheus/alerts_test.yml"
if have_promtool; then
	if "$PROMTOOL" test rules "$TESTS"; then pass "alert unit tests"; else fail "promtool test rules"; fi
fi

# ---------------------------------------------------------------------------------------------
section "promtool check config deploy/prometheus/prometheus.yml"
if have_promtool; then
	if "$PROMTOOL" check config "$CONFIG"; then pass "Prometheus config"; else fail "promtool check config"; fi
fi

# ---------------------------------------------------------------------------------------------
section "staleness threshold: the documented rewrite (26h -> 2h) still gives valid rules"
sed -e 's/26[h]/2h/g' -e 's/26 \* 3600/2 * 3600/g' "$RULES" >"$TMP/alerts-2h.yml"
if grep -nE '26h|26 \* 3600' "$TMP/alerts-2h.yml"; then
	fail "the rewrite left a 26h threshold behind (above)"
elif ! grep -q '2 \* 3600' "$TMP/alerts-2h.yml"; then
	fail "the rewrite found no threshold to change"
elif have_promtool && ! "$PROMTOOL" check rules "$TMP/alerts-2h.yml" >/dev/null; then
	"$PROMTOOL" check rules "$TMP/alerts-2h.yml"
	fail "rules rewritten for a 2h threshold do not check"
else
	pass "26h appears only where the rewrite changes it, and the result checks"
fi

# ---------------------------------------------------------------------------------------------
section "metric names: the rules, dashboard and docs use only the contract's names"
known=" "
for m in "${CONTRACT[@]}"; do known+="$m ${m}_bucket ${m}_sum ${m}_count "; done
unknown=0
for f in "$RULES" "$TESTS" "$DASHBOARD" "$DOCS"; do
	[[ -f "$f" ]] || {
		fail "missing ${f#"$ROOT"/}"
		continue
	}
	while read -r m; do
		if [[ -n "$m" && "$known" != *" $m "* ]]; then
			echo "  ${f#"$ROOT"/}: $m is not in the metric contract"
			unknown=1
		fi
	done < <(grep -oE '\bhrsync_[a-z_]+[a-z]' "$f" | sort -u)
done
if [[ $unknown == 0 ]]; then pass "no unknown hrsync_* name"; else fail "unknown metric names (above)"; fi
if [[ -f "$DOCS" ]]; then
	missing=0
	for m in "${CONTRACT[@]}"; do
		grep -q "\`$m\`" "$DOCS" || {
			echo "  docs/operations.md does not document $m"
			missing=1
		}
	done
	if [[ $missing == 0 ]]; then pass "docs/operations.md documents every metric"; else fail "undocumented metrics (above)"; fi
fi

# ---------------------------------------------------------------------------------------------
section "yamllint deploy/ (syntax, duplicate keys, indentation; config deploy/.yamllint)"
if need_tool yamllint yamllint; then
	if yamllint --strict -c "$DEPLOY/.yamllint" "$DEPLOY"; then
		pass "$(yamllint --version): every YAML file under deploy/"
	else
		fail "yamllint (above)"
	fi
fi

# ---------------------------------------------------------------------------------------------
section "shellcheck: deploy/check.sh, scripts/*.sh, .ci/run"
if need_tool shellcheck shellcheck; then
	if shellcheck -S warning "$DEPLOY/check.sh" "$ROOT"/scripts/*.sh "$ROOT/.ci/run"; then
		pass "shellcheck $(shellcheck --version | awk '/^version:/ {print $2}'): no warnings"
	else
		fail "shellcheck (above)"
	fi
fi

# ---------------------------------------------------------------------------------------------
# The deployment kit: image, compose, Kubernetes, systemd. Most checks below use
# scripts/deploycheck, a small Go program in its own module (its dependencies, k8s.io/api,
# BuildKit and compose-go, stay out of hrsync's go.mod), built once and then cached by Go. Its
# tests run once hrsync is built (below), so that they also run the kit through it.

section "Go, and scripts/deploycheck"
GO="$(command -v go || true)"
[[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
DEPLOYCHECK=""
if [[ -z "$GO" ]]; then
	fail "go not found (PATH, /usr/local/go/bin): the image build, Kubernetes, compose and systemd checks need it"
else
	started=$SECONDS
	if (cd "$ROOT/scripts/deploycheck" && "$GO" build -o "$TMP/deploycheck" .) >"$TMP/deploycheck-build.log" 2>&1; then
		DEPLOYCHECK="$TMP/deploycheck"
		pass "built scripts/deploycheck ($((SECONDS - started)) s; a first build downloads its modules and compiles them, later builds are cached)"
	else
		tail -n 20 "$TMP/deploycheck-build.log"
		fail "go build scripts/deploycheck (above)"
	fi
fi
have_deploycheck() { [[ -n "$DEPLOYCHECK" ]]; }

# ---------------------------------------------------------------------------------------------
section "Dockerfile deploy/Dockerfile: BuildKit's checks, structure, build context"
# No Docker engine is needed: BuildKit's own Dockerfile parser and the rules of
# `docker build --check` run in deploycheck (base images are not pulled; a stub stands in for
# their configuration). Then the build stage's RUN lines run here, in a copy of the context
# .dockerignore leaves, so the binary the image would hold is built and checked.
HRSYNC_BIN=""
if have_deploycheck; then
	started=$SECONDS
	mkdir -p "$TMP/context" "$TMP/out"
	if "$DEPLOYCHECK" dockerfile -root "$ROOT" -file deploy/Dockerfile -defaults "$ROOT/config.yaml" \
		-export "$TMP/context" -script "$TMP/build.sh"; then
		pass "Dockerfile lint and structure, .dockerignore"
	else
		fail "Dockerfile (above)"
	fi
	if [[ -s "$TMP/build.sh" ]]; then
		echo "running the build stage's RUN lines in the exported context (log: go mod download, go build)"
		if (cd "$TMP/context" && PATH="$(dirname "$GO"):$PATH" OUT="$TMP/out" VERSION=deploycheck TARGETOS=linux \
			COMMIT=0123456789abcdef0123456789abcdef01234567 DATE=2026-11-29T00:00:00Z \
			TARGETARCH="$("$GO" env GOARCH)" bash "$TMP/build.sh") >"$TMP/image-build.log" 2>&1; then
			HRSYNC_BIN="$TMP/out/hrsync"
			pass "the image's go build succeeds in the .dockerignore'd context ($((SECONDS - started)) s)"
		else
			tail -n 30 "$TMP/image-build.log"
			fail "the image's build stage fails in the build context (above)"
		fi
	fi
	if [[ -n "$HRSYNC_BIN" ]]; then
		if "$DEPLOYCHECK" static "$HRSYNC_BIN"; then pass "static binary (runs on distroless static)"; else fail "the binary is not static"; fi
		if [[ "$("$HRSYNC_BIN" --version)" == "hrsync deploycheck (commit 0123456789ab, built 2026-11-29, "* ]]; then
			pass "hrsync --version prints the VERSION, COMMIT and DATE build arguments (-X .../internal/buildinfo)"
		else
			fail "hrsync --version printed '$("$HRSYNC_BIN" --version)', not 'hrsync deploycheck (commit 0123456789ab, built 2026-11-29, …)': the -X of .../internal/buildinfo are not applied"
		fi
		# The image holds the release's build (internal/releasebuild): the tests ran that binary.
		settings=$("$GO" version -m "$HRSYNC_BIN" | awk '$1 == "build" { print $2 }')
		missing=()
		for want in CGO_ENABLED=0 -trimpath=true -tags=timetzdata; do
			grep -qxF -- "$want" <<<"$settings" || missing+=("$want")
		done
		if ((${#missing[@]} == 0)); then
			pass "the image's binary is the release's build (CGO_ENABLED=0 -trimpath -tags timetzdata, read back with go version -m)"
		else
			fail "the image's binary was not built as a release is: go version -m lacks ${missing[*]} (internal/releasebuild)"
		fi
		[[ -d "$TMP/out/state/new-hires" ]] || fail "the build stage does not create the state directory and its drop folder"
	fi
	echo "not checked here: building the image itself (no Docker engine on this machine; run docker build -f deploy/Dockerfile .)"
else
	fail "Dockerfile: no deploycheck"
fi
have_hrsync() { [[ -n "$HRSYNC_BIN" ]]; }

# ---------------------------------------------------------------------------------------------
section "scripts/deploycheck: go vet, staticcheck and its tests (the real kit passes, a broken copy of each file fails)"
if [[ -n "$GO" ]]; then
	started=$SECONDS
	if (cd "$ROOT/scripts/deploycheck" && "$GO" vet ./... && DEPLOYCHECK_HRSYNC="$HRSYNC_BIN" "$GO" test -count=1 ./...); then
		pass "deploycheck's tests ($((SECONDS - started)) s$(have_hrsync || echo '; without an hrsync binary the cases hrsync itself catches skip'))"
	else
		fail "scripts/deploycheck: go vet or go test (above)"
	fi
fi
# scripts/test.sh installs staticcheck (pinned) and puts it on PATH before it runs this script.
if command -v staticcheck >/dev/null 2>&1; then
	if (cd "$ROOT/scripts/deploycheck" && staticcheck ./...); then
		pass "staticcheck $(staticcheck -version | awk '{print $2}') scripts/deploycheck"
	else
		fail "staticcheck scripts/deploycheck (above)"
	fi
else
	skip "staticcheck not on PATH: scripts/deploycheck not checked with it (scripts/test.sh installs it)"
fi
BIN_FLAG=()
if have_hrsync; then BIN_FLAG=(-hrsync "$HRSYNC_BIN"); fi

# ---------------------------------------------------------------------------------------------
section "Kubernetes deploy/kubernetes: API types, Pod Security, hrsync's containers; kube-score"
# Offline: each object is decoded strictly into k8s.io/api's types (unknown, misspelt or
# mistyped fields fail), which is what a schema validator checks (kubeconform would fetch its
# schemas from the network); the restricted Pod Security Standard is the admission
# controller's own code. An API server's own validation (e.g. quotas) is not run.
if have_deploycheck; then
	if "$DEPLOYCHECK" kube "${BIN_FLAG[@]}" -defaults "$ROOT/config.yaml" "$DEPLOY/kubernetes"; then
		pass "Kubernetes manifests"
	else
		fail "Kubernetes manifests (above)"
	fi
else
	fail "Kubernetes: no deploycheck"
fi
# kube-score: resources, probes, selectors of Services and PDBs, the HPA's target, CronJob
# settings, image pull policy, label values. Not applied: limits on CPU (the kit sets none: a
# sync is throttled by its request budget, not by the CPU), ephemeral storage and a
# NetworkPolicy (the cluster's to set), and the image tag (the kustomization pins it, checked
# by deploycheck).
if [[ -n "$GO" ]]; then
	started=$SECONDS
	if "$GO" run "github.com/zegl/kube-score/cmd/kube-score@$KUBE_SCORE_VERSION" score --output-format ci \
		--ignore-container-cpu-limit \
		--ignore-test container-ephemeral-storage-request-and-limit,pod-networkpolicy,container-image-tag \
		"$DEPLOY"/kubernetes/*.yaml >"$TMP/kube-score.out" 2>&1; then
		grep -E '^\[(WARNING|CRITICAL)\]' "$TMP/kube-score.out" || true
		pass "kube-score $KUBE_SCORE_VERSION: no critical finding ($(grep -c '^\[OK\]' "$TMP/kube-score.out") checks passed, $((SECONDS - started)) s)"
	else
		grep -vE '^\[(OK|SKIPPED)\]' "$TMP/kube-score.out"
		fail "kube-score (above)"
	fi
fi
if command -v kubectl >/dev/null 2>&1; then
	if kubectl kustomize "$DEPLOY/kubernetes" >"$TMP/kustomized.yaml" 2>"$TMP/kustomize.err"; then
		pass "kubectl kustomize builds the kustomization ($(grep -c '^kind:' "$TMP/kustomized.yaml") objects)"
	else
		cat "$TMP/kustomize.err"
		fail "kubectl kustomize deploy/kubernetes"
	fi
else
	echo "kubectl not installed: kustomize build not run (deploycheck checked the kustomization's list)"
fi

# ---------------------------------------------------------------------------------------------
section "Compose deploy/compose.yaml"
if have_deploycheck; then
	if "$DEPLOYCHECK" compose "${BIN_FLAG[@]}" -defaults "$ROOT/config.yaml" -env-file "$DEPLOY/.env.example" \
		-prometheus "$DEPLOY/compose/prometheus.yml" "$DEPLOY/compose.yaml"; then
		pass "compose file (compose-go, the loader of Docker Compose v2)"
	else
		fail "compose file (above)"
	fi
else
	fail "compose: no deploycheck"
fi
echo "not checked here: starting the stack (no Docker engine on this machine)"

# ---------------------------------------------------------------------------------------------
section "dashboard deploy/grafana/hr-dashboard.json (the warehouse's people models) and its provisioning"
# Its queries run on a migrated warehouse in scripts/deploycheck's TestGrafanaHRQueries (above).
if have_deploycheck; then
	if "$DEPLOYCHECK" grafana -sql "$TMP/hr-dashboard.sql" -provisioning "$DEPLOY/grafana/provisioning" \
		-compose "$DEPLOY/compose.yaml" "$DEPLOY/grafana/hr-dashboard.json"; then
		pass "ids and grid, \${DS_POSTGRES} and \${schema} on every query, no names read, Grafana's macros known, provisioning"
	else
		fail "HR dashboard or provisioning (above)"
	fi
else
	fail "HR dashboard: no deploycheck"
fi

# ---------------------------------------------------------------------------------------------
section "dashboard deploy/grafana/hrsync-dashboard.json and Grafana provisioning"
if have_deploycheck; then
	if "$DEPLOYCHECK" grafana -queries "$TMP/dashboard-queries.yml" -provisioning "$DEPLOY/grafana/provisioning" \
		-compose "$DEPLOY/compose.yaml" "$DASHBOARD"; then
		pass "ids and grid, \${DS_PROMETHEUS} on every query, the account variable on every hrsync_* selector, provisioning"
	else
		fail "dashboard or provisioning (above)"
	fi
	# Every query, Grafana's variables replaced, as a recording rule: promtool parses the PromQL.
	if have_promtool && [[ -s "$TMP/dashboard-queries.yml" ]]; then
		if "$PROMTOOL" check rules "$TMP/dashboard-queries.yml" >"$TMP/q.out" 2>&1; then
			pass "every dashboard query parses as PromQL"
		else
			cat "$TMP/q.out"
			fail "dashboard PromQL (above)"
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------
section "Prometheus configurations for compose and Kubernetes"
if have_promtool; then
	if "$PROMTOOL" check config "$DEPLOY/compose/prometheus.yml"; then pass "deploy/compose/prometheus.yml"; else fail "promtool check config deploy/compose/prometheus.yml"; fi
	# Debian's promtool is built without Kubernetes service discovery: check the file with its
	# kubernetes_sd_configs swapped for a static target (the relabelling and rules still count).
	if have_deploycheck; then
		cp "$RULES" "$TMP/alerts.yml"
		if "$DEPLOYCHECK" k8s-sd-as-static "$DEPLOY/prometheus/prometheus-kubernetes.yml" "$TMP/prometheus-kubernetes.yml" &&
			"$PROMTOOL" check config "$TMP/prometheus-kubernetes.yml"; then
			pass "deploy/prometheus/prometheus-kubernetes.yml (kubernetes_sd_configs itself not checked: Debian's promtool lacks it)"
		else
			fail "promtool check config prometheus-kubernetes.yml"
		fi
	fi
fi

# ---------------------------------------------------------------------------------------------
section "systemd deploy/systemd/hrsync.service"
UNIT="$DEPLOY/systemd/hrsync.service"
if ! need_tool systemd-analyze systemd; then
	:
elif ! have_hrsync; then
	fail "systemd: no hrsync binary to verify ExecStart against"
else
	# verify needs ExecStart's binary and the EnvironmentFile to exist: point them at the binary
	# built above and at the example env file, in a copy.
	mkdir -p "$TMP/systemd"
	cp "$DEPLOY/systemd/hrsync.env.example" "$TMP/systemd/hrsync.env"
	sed -e "s#^ExecStart=/usr/local/bin/hrsync #ExecStart=$HRSYNC_BIN #" \
		-e "s#^EnvironmentFile=/etc/hrsync/hrsync.env#EnvironmentFile=$TMP/systemd/hrsync.env#" "$UNIT" >"$TMP/systemd/hrsync.service"
	if ! grep -q "^ExecStart=$HRSYNC_BIN " "$TMP/systemd/hrsync.service"; then
		fail "hrsync.service: ExecStart is not /usr/local/bin/hrsync …"
	fi
	# systemd-analyze verify exits 0 on unknown keys and unparsable values: any line about the
	# unit is a failure.
	(cd "$TMP/systemd" && systemd-analyze verify ./hrsync.service) >"$TMP/verify.out" 2>&1
	rc=$?
	if [[ $rc == 0 ]] && ! grep -q 'hrsync' "$TMP/verify.out"; then
		pass "systemd-analyze verify: no warnings"
	else
		cat "$TMP/verify.out"
		fail "systemd-analyze verify hrsync.service (above)"
	fi
	# --threshold is on a 0-100 scale; the report shows tenths of it: 20 is an exposure of 2.0.
	if (cd "$TMP/systemd" && systemd-analyze security --offline=yes --threshold=20 ./hrsync.service) >"$TMP/security.out" 2>&1; then
		pass "systemd-analyze security: $(grep -o 'exposure level.*' "$TMP/security.out" | head -n 1) (at most 2.0 allowed)"
	else
		grep -E '^✗|exposure level' "$TMP/security.out"
		fail "systemd-analyze security: exposure above 2.0 (above)"
	fi
	# hrsync's part: ExecStart, TimeoutStopSec, the command line with the example env file.
	if have_deploycheck; then
		if "$DEPLOYCHECK" systemd "${BIN_FLAG[@]}" -defaults "$ROOT/config.yaml" -env-file "$DEPLOY/systemd/hrsync.env.example" "$UNIT"; then
			pass "ExecStart, TimeoutStopSec and the unit's command line with the example env file, through hrsync"
		else
			fail "systemd: hrsync's checks of the unit (above)"
		fi
	fi
	echo "not checked here: running the unit under systemd (no systemd as PID 1 on this machine)"
fi

# ---------------------------------------------------------------------------------------------
section "secrets: the local env files are ignored by git"
if command -v git >/dev/null 2>&1 && git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	ok=1
	for f in deploy/.env deploy/systemd/hrsync.env; do
		git -C "$ROOT" check-ignore -q "$f" || {
			echo "  $f is not ignored"
			ok=0
		}
	done
	if [[ $ok == 1 ]]; then pass "deploy/.env and deploy/systemd/hrsync.env are git-ignored"; else fail "env files not ignored (above)"; fi
else
	echo "not a git checkout: skipped"
fi

# ---------------------------------------------------------------------------------------------
if [[ -n "${HRSYNC_CHECK_METRICS_URL:-}" ]]; then
	section "live endpoint $HRSYNC_CHECK_METRICS_URL"
	if curl -fsS --max-time 10 "$HRSYNC_CHECK_METRICS_URL" -o "$TMP/metrics.txt"; then
		if have_promtool; then
			if "$PROMTOOL" check metrics <"$TMP/metrics.txt"; then pass "promtool check metrics"; else fail "promtool check metrics"; fi
		fi
		# Series that only exist after the first event (a 429, a panic, a CSV row) are not required.
		for m in hrsync_build_info hrsync_sync_runs_total hrsync_sync_duration_seconds \
			hrsync_source_retries_total hrsync_source_rate_limit_wait_seconds_total \
			process_start_time_seconds; do
			if grep -qE "^# TYPE $m " "$TMP/metrics.txt"; then pass "exports $m"; else fail "endpoint does not export $m"; fi
		done
	else
		fail "could not fetch $HRSYNC_CHECK_METRICS_URL"
	fi
fi

# ---------------------------------------------------------------------------------------------
section "summary"
if ((${#failures[@]})); then
	printf 'FAILED: %s\n' "${failures[@]}" >&2
	echo "deploy/check.sh: ${#failures[@]} check(s) failed" >&2
	exit 1
fi
if ((skipped)); then
	echo "deploy/check.sh: all checks run passed; $skipped skipped (SKIPPED above: each says which tool is missing and how to get it)"
else
	echo "deploy/check.sh: all checks passed"
fi
