package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checks run on the repository's real kit, which must pass, and on copies of it with one
// edit each, which must fail with the problem named. DEPLOYCHECK_HRSYNC (deploy/check.sh sets
// it to the hrsync it built) also runs the command lines through hrsync itself.

const repo = "../.."

var discard = io.Discard

func init() { out = discard }

// wrong starts the variable names hrsync does not read that the cases below write on purpose,
// in two parts so that cmd/hrsync's TestEveryHRSYNCNameIsKnown, which reads every file of the
// repository, does not take them for names something reads.
const wrong = "HRSYNC_"

func hrsyncBin(t *testing.T) string {
	bin := os.Getenv("DEPLOYCHECK_HRSYNC")
	if bin == "" {
		t.Log("DEPLOYCHECK_HRSYNC not set: command lines are not run through hrsync itself")
	}
	return bin
}

func defaults(t *testing.T) config {
	t.Helper()
	d, err := loadDefaults(filepath.Join(repo, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// edit is one change to a copy of the kit: in file, old (which must be there) becomes new.
type edit struct{ file, old, new string }

// copyTree copies the files under src (relative to the repository) into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(repo, src), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// apply makes the edits in dst, failing the test when an old text is not in its file (the kit
// changed under the test).
func apply(t *testing.T, dst string, edits ...edit) {
	t.Helper()
	for _, e := range edits {
		path := filepath.Join(dst, e.file)
		data, err := os.ReadFile(path)
		if err != nil && e.old != "" {
			t.Fatal(err)
		}
		if e.old == "" { // a new file, or text appended
			data = append(data, e.new...)
		} else {
			if !strings.Contains(string(data), e.old) {
				t.Fatalf("%s does not contain %q: update the test", e.file, e.old)
			}
			data = []byte(strings.Replace(string(data), e.old, e.new, 1))
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantProblems checks that p has a problem containing want, or none when want is empty.
func wantProblems(t *testing.T, p *problems, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if want == "" {
		if p.any() {
			t.Fatalf("the kit should pass, got:\n%s", strings.Join(p.list, "\n"))
		}
		return
	}
	for _, s := range p.list {
		if strings.Contains(s, want) {
			return
		}
	}
	t.Fatalf("want a problem containing %q, got:\n%s", want, strings.Join(p.list, "\n"))
}

// kitCase is one case of a check of the kit: the edits made to a copy of it, and the problem
// wanted ("" for none).
type kitCase struct {
	name  string
	edits []edit
	want  string
	// hrsync itself finds the fault: skipped without DEPLOYCHECK_HRSYNC.
	byHrsync bool
}

// checkKit runs each case on a copy of the kit: the repository's files under each path of from,
// copied into a new folder and edited as the case says, then check run on that folder, whose
// problems must be what the case wants.
func checkKit(t *testing.T, bin string, from []string, cases []kitCase, check func(t *testing.T, dst string, p *problems) error) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.byHrsync && bin == "" {
				t.Skip("needs DEPLOYCHECK_HRSYNC, an hrsync binary")
			}
			dst := t.TempDir()
			for _, f := range from {
				copyTree(t, f, dst)
			}
			apply(t, dst, tc.edits...)
			var p problems
			err := check(t, dst, &p)
			wantProblems(t, &p, err, tc.want)
		})
	}
}

func TestKube(t *testing.T) {
	bin := hrsyncBin(t)
	const (
		worker = "deploy/kubernetes/worker-deployment.yaml"
		serve  = "deploy/kubernetes/serve-deployment.yaml"
		cron   = "deploy/kubernetes/cronjob-sync.yaml"
		cm     = "deploy/kubernetes/configmap.yaml"
		secret = "deploy/kubernetes/secret.example.yaml"
		kust   = "deploy/kubernetes/kustomization.yaml"
	)
	checkKit(t, bin, []string{"deploy/kubernetes"}, []kitCase{
		{"the real kit passes", nil, "", false},
		{"a flag hrsync does not have", []edit{{worker, `args: ["--config", "/etc/hrsync/config.yaml", "run"]`, `args: ["--config", "/etc/hrsync/config.yaml", "run", "--serv"]`}}, "flags: hrsync --config", true},
		{"a configuration value hrsync refuses", []edit{{cm, "rate_limit: 60", "rate_limit: -1"}}, "configuration: hrsync --config", true},
		{"a misspelt field fails strict decoding", []edit{{worker, "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"}}, `unknown field "spec.template.spec.initContainers[0].securityContext.readOnlyRootFileSystem"`, false},
		{"privilege escalation breaks the restricted standard", []edit{{serve, "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true"}}, "Pod Security Standard restricted: allowPrivilegeEscalation != false", false},
		{"a hostPath volume breaks the restricted standard", []edit{{cron, "emptyDir:\n                sizeLimit: 64Mi", "hostPath:\n                path: /tmp"}}, "restricted volume types", false},
		{"a service account token", []edit{{worker, "automountServiceAccountToken: false", "automountServiceAccountToken: true"}}, "automountServiceAccountToken: false", false},
		{"a variable hrsync does not read", []edit{{worker, "- name: HRSYNC_SOURCE_API_KEY", "- name: HRSYNC_SOURCE_APIKEY"}}, "HRSYNC_SOURCE_APIKEY is not a variable hrsync reads", false},
		{"a Secret key the example lacks", []edit{{serve, "key: serve-api-keys", "key: serve-api-key"}}, `refers to key "serve-api-key" of Secret "hrsync"`, false},
		{"a ConfigMap not in the kit", []edit{{worker, "name: hrsync-config", "name: hrsync-conf"}}, `refers to ConfigMap "hrsync-conf", which is not in the kit`, false},
		{"a configuration key hrsync does not have", []edit{{cm, "    log:\n", "    logs:\n"}}, "logs.format is not a configuration key", false},
		{"a metrics port the configuration does not listen on", []edit{{cm, "      addr: \":9090\"", "      addr: \":9464\""}}, `metrics.addr is ":9464" but the deployment uses port 9090`, false},
		{"a serve port the configuration does not listen on", []edit{{cm, "      addr: \":8080\"", "      addr: \":8000\""}}, `serve.addr is ":8000" but the deployment uses port 8080`, false},
		{"serve without keys", []edit{{serve, "- name: HRSYNC_SERVE_API_KEYS", "- name: " + wrong + "SERVE_ETAG_SECRET2"}}, "serve has no keys", false},
		{"the worker without an API key", []edit{{worker, "- name: HRSYNC_SOURCE_API_KEY", "- name: HRSYNC_SERVE_API_KEYS"}}, "source.api_key (HRSYNC_SOURCE_API_KEY) is not set", false},
		{"an unknown hrsync command", []edit{{worker, `"/etc/hrsync/config.yaml", "run"]`, `"/etc/hrsync/config.yaml", "worker"]`}}, `"worker" is not an hrsync command`, false},
		{"a config file the pod does not mount", []edit{{serve, `"/etc/hrsync/config.yaml", "serve"]`, `"/etc/hrsync.yaml", "serve"]`}}, "--config /etc/hrsync.yaml: the deployment does not provide that file", false},
		{"too little time to stop the worker", []edit{{worker, "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 30"}}, "terminationGracePeriodSeconds must be at least 45", false},
		{"a probe on a path hrsync does not answer", []edit{{serve, "path: /readyz", "path: /ready"}}, `readiness probe path "/ready": hrsync answers /healthz and /readyz`, false},
		{"a probe on a port the container lacks", []edit{{worker, "port: metrics", "port: http"}}, "probe port http is not a port of the container", false},
		{"a command that replaces the ENTRYPOINT", []edit{{worker, `args: ["--config", "/etc/hrsync/config.yaml", "run"]`, `command: ["/usr/local/bin/hrsync"]
          args: ["--config", "/etc/hrsync/config.yaml", "run"]`}}, "command overrides the image's ENTRYPOINT", false},
		{"syncs that may overlap", []edit{{cron, "concurrencyPolicy: Forbid", "concurrencyPolicy: Allow"}}, `concurrencyPolicy "Allow": want Forbid`, false},
		{"a real value in the example Secret", []edit{{secret, "REPLACE-ME-source-api-key", "prod-3f9a"}}, "source-api-key holds a value without the REPLACE-ME placeholder", false},
		{"the example Secret applied by -k", []edit{{kust, "  - configmap.yaml\n", "  - configmap.yaml\n  - secret.example.yaml\n"}}, "an example Secret must not be in the kustomization", false},
		{"an image that floats", []edit{{kust, `newTag: "0.1.0"`, `newTag: latest`}}, "image hrsync: pin a tag or digest", false},
		{"a manifest neither listed nor explained", []edit{{"deploy/kubernetes/extra.yaml", "", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"}}, "extra.yaml is neither listed in kustomization.yaml nor explained there", false},
	}, func(t *testing.T, dst string, p *problems) error {
		return checkKube(filepath.Join(dst, "deploy/kubernetes"), defaults(t), bin, p)
	})
}

func TestCompose(t *testing.T) {
	bin := hrsyncBin(t)
	const compose = "deploy/compose.yaml"
	checkKit(t, bin, []string{"deploy"}, []kitCase{
		{"the real kit passes", nil, "", false},
		{"a variable hrsync does not read", []edit{{compose, "HRSYNC_LOG_FORMAT: json", wrong + "LOG_FORMATS: json"}}, wrong + "LOG_FORMATS is not a variable hrsync reads", false},
		{"the example env file names a variable hrsync does not read", []edit{{"deploy/.env.example", "", "\n# " + wrong + "SOURCE_TOKEN=x\n"}}, ".env.example: " + wrong + "SOURCE_TOKEN is not a variable hrsync reads", false},
		{"a secret written in the file", []edit{{compose, "HRSYNC_SOURCE_API_KEY: ${HRSYNC_SOURCE_API_KEY:?set HRSYNC_SOURCE_API_KEY in deploy/.env}", "HRSYNC_SOURCE_API_KEY: prod-3f9a"}}, "HRSYNC_SOURCE_API_KEY is written in the file", false},
		{"a metrics port Prometheus does not scrape", []edit{{compose, `HRSYNC_METRICS_ADDR: ":9090"
      HRSYNC_LOG_FORMAT: json
    volumes:`, `HRSYNC_METRICS_ADDR: ":9091"
      HRSYNC_LOG_FORMAT: json
    volumes:`}}, `service worker: metrics.addr is ":9091" but the deployment uses port 9090`, false},
		{"serve listening off its published port", []edit{{compose, `HRSYNC_SERVE_ADDR: ":8080"`, `HRSYNC_SERVE_ADDR: ":8000"`}}, `service serve: serve.addr is ":8000" but the deployment uses port 8080`, false},
		{"the worker without a schedule", []edit{{compose, "HRSYNC_SCHEDULE: ${HRSYNC_SCHEDULE:-0 2 * * *}", "HRSYNC_SCHEDULE: \"\""}}, "hrsync run syncs on the schedule: schedule (HRSYNC_SCHEDULE) is not set", false},
		{"an unknown hrsync command", []edit{{compose, `command: ["serve"]`, `command: ["server"]`}}, `"server" is not an hrsync command`, false},
		{"too little time to stop the worker", []edit{{compose, "stop_grace_period: 60s", "stop_grace_period: 10s"}}, "worker stop_grace_period must be at least 45s", false},
		{"the worker starting before the migration ends", []edit{{compose, "      migrate:\n        condition: service_completed_successfully\n\n  serve:", "      migrate:\n        condition: service_started\n\n  serve:"}}, "worker must depend on migrate with condition service_completed_successfully", false},
		{"one host port for two serve replicas", []edit{{compose, `"127.0.0.1:8080-8081:8080"`, `"127.0.0.1:8080:8080"`}}, "serve publishes 8080 for 2 replicas", false},
		{"hrsync with capabilities", []edit{{compose, "  cap_drop:\n    - ALL\n", ""}}, "want read_only, cap_drop ALL and no-new-privileges", false},
		{"a schema error compose-go rejects", []edit{{compose, "stop_grace_period: 60s", "stop_grace_period: 60s\n    stop_grace: 60s"}}, "services.worker.stop_grace", false},
	}, func(t *testing.T, dst string, p *problems) error {
		apply(t, dst, edit{"go.mod", "", "module example\n"})
		return composeCmd([]string{"-hrsync", bin, "-defaults", filepath.Join(repo, "config.yaml"),
			"-env-file", filepath.Join(dst, "deploy/.env.example"), "-prometheus", filepath.Join(dst, "deploy/compose/prometheus.yml"),
			filepath.Join(dst, compose)}, p)
	})
}

func TestDockerfile(t *testing.T) {
	const df = "deploy/Dockerfile"
	checkKit(t, "", []string{"go.mod", "go.sum", ".dockerignore", df, "cmd/hrsync", "internal/buildinfo"}, []kitCase{
		{"the real Dockerfile passes", nil, "", false},
		{"a docker build --check warning", []edit{{df, "FROM gcr.io/distroless/static-debian12:nonroot", "from gcr.io/distroless/static-debian12:nonroot"}}, "ConsistentInstructionCasing", false},
		{"a Go older than go.mod's", []edit{{df, "ARG GO_VERSION=1.26", "ARG GO_VERSION=1.25"}}, "the build stage is golang:1.25-bookworm but go.mod says go 1.26", false},
		{"a binary that needs libc", []edit{{df, "CGO_ENABLED=0 ", ""}}, `the go build line lacks "CGO_ENABLED=0"`, false},
		{"a version hrsync version cannot print", []edit{{df, "buildinfo.version=${VERSION}", "buildinfo.Version=${VERSION}"}}, `the go build line lacks "-X github.com/hrsync/hrsync/internal/buildinfo.version="`, false},
		{"the version variable gone from package buildinfo", []edit{{"internal/buildinfo/buildinfo.go", "\tversion  string\n", ""}}, "package buildinfo in", false},
		{"root at run time", []edit{{df, "USER 65532:65532", "USER 0:0"}}, `final stage USER "0:0": want a non-root user`, false},
		{"a state directory others may read", []edit{{df, "--chmod=0700 /out/state", "--chmod=0755 /out/state"}}, "want the runtime user (65532) and 0700", false},
		{"a shell ENTRYPOINT", []edit{{df, `ENTRYPOINT ["hrsync"]`, `ENTRYPOINT hrsync`}}, `want ENTRYPOINT ["hrsync"] in exec form`, false},
		{"the metrics port not exposed", []edit{{df, "EXPOSE 8080 9090", "EXPOSE 8080"}}, "EXPOSE 9090 missing", false},
		{"a variable hrsync does not read", []edit{{df, "ENV HRSYNC_METRICS_ADDR=:9090", "ENV " + wrong + "METRIC_ADDR=:9090"}}, "ENV " + wrong + "METRIC_ADDR is not a variable hrsync reads", false},
		{"go.sum left out of the context", []edit{{".dockerignore", "", "\ngo.sum\n"}}, "go.sum is not in the build context", false},
		{"an env file sent to the builder", []edit{{".dockerignore", "**/.env\n", ""}, {".env", "", "POSTGRES_PASSWORD=x\n"}}, ".dockerignore: .env would be sent to the builder", false},
	}, func(t *testing.T, dst string, p *problems) error {
		return dockerfileCmd([]string{"-root", dst, "-file", df, "-defaults", filepath.Join(repo, "config.yaml")}, p)
	})
}

func TestSystemd(t *testing.T) {
	bin := hrsyncBin(t)
	const (
		unit = "deploy/systemd/hrsync.service"
		env  = "deploy/systemd/hrsync.env.example"
	)
	checkKit(t, bin, []string{"deploy/systemd"}, []kitCase{
		{"the real unit passes", nil, "", false},
		{"hrsync elsewhere", []edit{{unit, "ExecStart=/usr/local/bin/hrsync run", "ExecStart=/usr/bin/hrsync run"}}, "ExecStart=/usr/bin/hrsync run: want /usr/local/bin/hrsync", false},
		{"too little time to stop", []edit{{unit, "TimeoutStopSec=60s", "TimeoutStopSec=30s"}}, "TimeoutStopSec=30s: want at least 45s", false},
		{"a variable hrsync does not read", []edit{{env, "HRSYNC_LOG_FORMAT=json", wrong + "LOGFORMAT=json"}}, wrong + "LOGFORMAT is not a variable hrsync reads", false},
		{"no API key", []edit{{env, "HRSYNC_SOURCE_API_KEY=", "# HRSYNC_SOURCE_API_KEY="}}, "source.api_key (HRSYNC_SOURCE_API_KEY) is not set", false},
		{"an unknown command", []edit{{unit, "ExecStart=/usr/local/bin/hrsync run", "ExecStart=/usr/local/bin/hrsync worker"}}, `"worker" is not an hrsync command`, false},
		{"a flag hrsync does not have", []edit{{unit, "ExecStart=/usr/local/bin/hrsync run", "ExecStart=/usr/local/bin/hrsync run --serv"}}, "flags: hrsync run --serv -h: exit status 2", true},
		{"a schedule hrsync refuses", []edit{{env, "HRSYNC_SCHEDULE=0 2 * * *", "HRSYNC_SCHEDULE=0 25 * * *"}}, "configuration: hrsync version", true},
	}, func(t *testing.T, dst string, p *problems) error {
		return systemdCmd([]string{"-hrsync", bin, "-defaults", filepath.Join(repo, "config.yaml"),
			"-env-file", filepath.Join(dst, env), filepath.Join(dst, unit)}, p)
	})
}

// TestInvocation covers the command-line forms the kit files above do not use.
func TestInvocation(t *testing.T) {
	cfg := "serve:\n  api_keys: [k]\nwarehouse:\n  url: postgres://db/w\n"
	for _, tc := range []struct {
		name string
		inv  invocation
		want string
	}{
		{"--config=FILE and --addr", invocation{Args: []string{"--config=/etc/h.yaml", "serve", "--addr", ":8080"}, Files: map[string]string{"/etc/h.yaml": cfg}, Ports: map[string]int{"serve": 8080}}, ""},
		{"--addr off the published port", invocation{Args: []string{"--config=/etc/h.yaml", "serve", "--addr=:8081"}, Files: map[string]string{"/etc/h.yaml": cfg}, Ports: map[string]int{"serve": 8080}}, `serve.addr is ":8081" but the deployment uses port 8080`},
		{"an address without a port", invocation{Args: []string{"serve"}, Env: map[string]string{"HRSYNC_SERVE_ADDR": "localhost", "HRSYNC_SERVE_API_KEYS": "k", "HRSYNC_WAREHOUSE_URL": "x"}, Ports: map[string]int{"serve": 8080}}, `serve.addr "localhost": address localhost: missing port in address`},
		{"nothing listening on the metrics port", invocation{Args: []string{"run"}, Env: map[string]string{"HRSYNC_SOURCE_URL": "u", "HRSYNC_SOURCE_API_KEY": "k", "HRSYNC_METRICS_ADDR": ""}, Ports: map[string]int{"metrics": 9090}}, "the deployment uses port 9090 but metrics.addr is empty"},
		{"no warehouse", invocation{Args: []string{"migrate"}, Env: map[string]string{"HRSYNC_WAREHOUSE_URL": ""}}, "warehouse.url (HRSYNC_WAREHOUSE_URL) is empty"},
		{"version needs nothing", invocation{Args: []string{"version"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p problems
			tc.inv.Where = tc.name
			checkInvocation(tc.inv, defaults(t), "", &p)
			wantProblems(t, &p, nil, tc.want)
		})
	}
}

func TestGrafana(t *testing.T) {
	const (
		dash = "deploy/grafana/hrsync-dashboard.json"
		ds   = "deploy/grafana/provisioning/datasources/prometheus.yaml"
		prov = "deploy/grafana/provisioning/dashboards/hrsync.yaml"
	)
	checkKit(t, "", []string{"deploy"}, []kitCase{
		{"the real dashboard and provisioning pass", nil, "", false},
		{"a query for every account", []edit{{dash, `, account=~\"$account\"}[$window]`, `}[$window]`}}, `is not filtered by account=~"$account"`, false},
		{"a panel on another datasource", []edit{{dash, "\"id\": 2,\n      \"datasource\": {\n        \"type\": \"prometheus\",\n        \"uid\": \"${DS_PROMETHEUS}\"", "\"id\": 2,\n      \"datasource\": {\n        \"type\": \"prometheus\",\n        \"uid\": \"prometheus\""}}, `panel "Scrape target up": datasource is not ${DS_PROMETHEUS}`, false},
		{"two panels with one id", []edit{{dash, `"id": 2,`, `"id": 1,`}}, "missing or duplicate id", false},
		{"a variable the dashboard does not define", []edit{{dash, `, account=~\"$account\"}[$window]`, `, account=~\"$account\"}[$windows]`}}, "unknown variable $windows", false},
		{"a datasource Grafana cannot reach", []edit{{ds, "url: http://prometheus:9090", "url: http://localhost:9090"}}, "want a default prometheus datasource at http://prometheus:9090", false},
		{"a provider reading another folder", []edit{{prov, "path: /var/lib/grafana/dashboards/hrsync", "path: /var/lib/grafana/dashboards"}}, "which no file provider of dashboards/hrsync.yaml reads", false},
		{"not JSON", []edit{{dash, `"id": 2,`, `"id": 2,,`}}, "invalid character", false},
	}, func(t *testing.T, dst string, p *problems) error {
		queries := filepath.Join(dst, "queries.yml")
		err := checkGrafana(filepath.Join(dst, dash), filepath.Join(dst, "deploy/grafana/provisioning"), filepath.Join(dst, "deploy/compose.yaml"), queries, sqlRun{}, p)
		if err == nil && !p.any() { // a clean dashboard: every query written out
			rules, err := os.ReadFile(queries)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(rules), "- record: dashboard:query_"); n < 20 || strings.Contains(string(rules), "$") {
				t.Errorf("the rules file has %d queries, or a variable left:\n%s", n, rules)
			}
		}
		return err
	})
}

func TestKubernetesSDAsStatic(t *testing.T) {
	dst := t.TempDir()
	outFile := filepath.Join(dst, "out.yml")
	var p problems
	if err := kubernetesSDAsStatic([]string{filepath.Join(repo, "deploy/prometheus/prometheus-kubernetes.yml"), outFile}, &p); err != nil || p.any() {
		t.Fatal(err, p.list)
	}
	got, _ := os.ReadFile(outFile)
	if strings.Contains(string(got), "kubernetes_sd_configs") || !strings.Contains(string(got), "hrsync:9090") || !strings.Contains(string(got), "__meta_kubernetes_pod_container_port_name") {
		t.Errorf("want the relabelling kept and a static target instead of kubernetes_sd_configs, got:\n%s", got)
	}
	// A job with no Kubernetes discovery to swap: the file is not the one the kit ships.
	p = problems{}
	if err := kubernetesSDAsStatic([]string{filepath.Join(repo, "deploy/prometheus/prometheus.yml"), outFile}, &p); err != nil {
		t.Fatal(err)
	}
	wantProblems(t, &p, nil, "scrape job hrsync has no kubernetes_sd_configs")
}
