#!/usr/bin/env bash
# Validates the operations kit in deploy/: the Prometheus rules, their unit tests and config,
# and the Grafana dashboard. Works from any directory, needs no input, and exits non-zero when
# any check fails (after running all of them).
#
#   bash deploy/check.sh
#
# Needs promtool. When it is missing and we are root, installs Debian's `prometheus` package
# (which ships promtool in /usr/bin; on a host running systemd that package also enables a
# Prometheus service on :9090). Needs python3 (or at least jq) for the dashboard checks.
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
# _count). Keep in step with docs/operations.md and the code.
CONTRACT=(
	hrsync_sync_runs_total
	hrsync_sync_duration_seconds
	hrsync_sync_records_total
	hrsync_sync_last_success_timestamp_seconds
	hrsync_sync_walk_inconsistencies_total
	hrsync_sync_deletions_refused_total
	hrsync_sync_skipped_total
	hrsync_job_panics_total
	hrsync_source_requests_total
	hrsync_source_retries_total
	hrsync_source_rate_limit_wait_seconds_total
	hrsync_onboarding_rows_total
	hrsync_serve_requests_total
	hrsync_serve_request_duration_seconds
	hrsync_build_info
)

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

failures=()
section() { printf '\n==> %s\n' "$*"; }
pass() { printf -- '--- ok: %s\n' "$*"; }
fail() {
	printf -- '--- FAILED: %s\n' "$*" >&2
	failures+=("$*")
}

# ---------------------------------------------------------------------------------------------
section "promtool"
PROMTOOL="$(command -v promtool || true)"
[[ -z "$PROMTOOL" && -x /usr/bin/promtool ]] && PROMTOOL=/usr/bin/promtool
if [[ -z "$PROMTOOL" ]]; then
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		candidate() { apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ {print $2}'; }
		if [[ -z "$(candidate)" || "$(candidate)" == "(none)" ]]; then
			echo "apt-cache has no candidate for prometheus; running apt-get update"
			apt-get update </dev/null || true
		fi
		apt-cache policy prometheus </dev/null || true
		if [[ -n "$(candidate)" && "$(candidate)" != "(none)" ]]; then
			echo "installing Debian's prometheus package for promtool"
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus </dev/null ||
				fail "apt-get install prometheus"
		else
			fail "no installable prometheus package (apt-cache policy prometheus)"
		fi
		PROMTOOL="$(command -v promtool || true)"
		[[ -z "$PROMTOOL" && -x /usr/bin/promtool ]] && PROMTOOL=/usr/bin/promtool
	else
		echo "promtool not found and not root: install it (Debian: apt-get install prometheus)" >&2
	fi
fi
if [[ -n "$PROMTOOL" ]]; then
	"$PROMTOOL" --version 2>&1 | head -n 1
	pass "promtool at $PROMTOOL"
else
	fail "promtool not available"
fi

have_promtool() { [[ -n "$PROMTOOL" ]]; }

# ---------------------------------------------------------------------------------------------
section "promtool check rules deploy/prometheus/alerts.yml"
if have_promtool; then
	if "$PROMTOOL" check rules "$RULES"; then pass "alert rules"; else fail "promtool check rules"; fi
else
	fail "promtool check rules: no promtool"
fi

# ---------------------------------------------------------------------------------------------
section "promtool test rules deploy/prometheus/alerts_test.yml"
if have_promtool; then
	if "$PROMTOOL" test rules "$TESTS"; then pass "alert unit tests"; else fail "promtool test rules"; fi
else
	fail "promtool test rules: no promtool"
fi

# ---------------------------------------------------------------------------------------------
section "promtool check config deploy/prometheus/prometheus.yml"
if have_promtool; then
	if "$PROMTOOL" check config "$CONFIG"; then pass "Prometheus config"; else fail "promtool check config"; fi
else
	fail "promtool check config: no promtool"
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
section "dashboard deploy/grafana/hrsync-dashboard.json: valid JSON"
if command -v python3 >/dev/null 2>&1; then
	if python3 -m json.tool "$DASHBOARD" >/dev/null; then pass "parses (python3 -m json.tool)"; else fail "dashboard JSON does not parse"; fi
elif command -v jq >/dev/null 2>&1; then
	if jq empty "$DASHBOARD"; then pass "parses (jq)"; else fail "dashboard JSON does not parse"; fi
else
	fail "neither python3 nor jq to parse the dashboard"
fi

# ---------------------------------------------------------------------------------------------
section "dashboard: structure, datasource and queries"
if command -v python3 >/dev/null 2>&1; then
	# Writes every query, with Grafana's variables replaced, as a recording rule so that promtool
	# parses the PromQL.
	if python3 - "$DASHBOARD" "$TMP/dashboard-queries.yml" <<'PY'; then
import json, sys

path, out = sys.argv[1], sys.argv[2]
d = json.load(open(path))
problems = []

def need(cond, msg):
    if not cond:
        problems.append(msg)

need(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36, "schemaVersion missing or old")
need(d.get("uid") and d.get("title"), "uid and title")
need(any(i.get("name") == "DS_PROMETHEUS" and i.get("pluginId") == "prometheus" for i in d.get("__inputs", [])),
     "__inputs has no DS_PROMETHEUS prometheus input")
variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
need(variables.get("DS_PROMETHEUS", {}).get("type") == "datasource", "no DS_PROMETHEUS datasource variable")

ids, exprs = set(), []
panels = []
def walk(ps):
    for p in ps:
        panels.append(p)
        walk(p.get("panels", []))
walk(d.get("panels", []))
for p in panels:
    name = p.get("title", "?")
    need("id" in p and p["id"] not in ids, f"panel {name!r}: missing or duplicate id")
    ids.add(p.get("id"))
    g = p.get("gridPos", {})
    need(all(k in g for k in "hwxy") and g.get("x", 0) + g.get("w", 0) <= 24, f"panel {name!r}: bad gridPos")
    if p.get("type") == "row":
        continue
    need(p.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", f"panel {name!r}: datasource is not ${{DS_PROMETHEUS}}")
    need(p.get("targets"), f"panel {name!r}: no queries")
    for t in p.get("targets", []):
        need(t.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", f"panel {name!r}: query datasource")
        exprs.append((name, t.get("expr", "")))
for a in d.get("annotations", {}).get("list", []):
    if a.get("expr"):
        exprs.append(("annotation " + a.get("name", "?"), a["expr"]))

subst = {"$__rate_interval": "2m", "$__interval": "1m", "$__range": "1d", "$window": "1d",
         "$job": "hrsync", "$instance": ".*"}
with open(out, "w") as f:
    f.write("groups:\n  - name: dashboard-queries\n    rules:\n")
    for i, (name, e) in enumerate(exprs):
        need(e.strip(), f"panel {name!r}: empty query")
        for k in sorted(subst, key=len, reverse=True):
            e = e.replace(k, subst[k])
        need("$" not in e, f"panel {name!r}: unknown variable in {e!r}")
        f.write(f"      - record: dashboard:query_{i}\n        expr: {json.dumps(e)}\n")

for p in problems:
    print("  " + p)
print(f"{len(panels)} panels, {len(exprs)} queries")
sys.exit(1 if problems else 0)
PY
		pass "structure and datasource"
	else
		fail "dashboard structure (above)"
	fi
	if have_promtool && [[ -s "$TMP/dashboard-queries.yml" ]]; then
		if "$PROMTOOL" check rules "$TMP/dashboard-queries.yml" >"$TMP/q.out" 2>&1; then
			pass "every dashboard query parses as PromQL"
		else
			cat "$TMP/q.out"
			fail "dashboard PromQL (above)"
		fi
	fi
else
	echo "python3 not found: structure and PromQL of the dashboard not checked"
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
echo "deploy/check.sh: all checks passed"
