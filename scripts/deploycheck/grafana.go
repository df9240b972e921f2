package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// The dashboard and its provisioning. Grafana itself is not run here; its PromQL is parsed by
// promtool from the rules file this writes. What is checked is the kit's: every query on the
// DS_PROMETHEUS datasource, every hrsync_* selector (but hrsync_build_info's) filtered by the
// account variable, and the compose stack's provisioning finding the dashboard and Prometheus.

type panel struct {
	ID         *int    `json:"id"`
	Title      string  `json:"title"`
	Type       string  `json:"type"`
	GridPos    *grid   `json:"gridPos"`
	Datasource *dsRef  `json:"datasource"`
	Targets    []query `json:"targets"`
	Panels     []panel `json:"panels"`
}

type grid struct{ H, W, X, Y *int }

type dsRef struct {
	UID string `json:"uid"`
}

type query struct {
	Datasource *dsRef `json:"datasource"`
	Expr       string `json:"expr"`
}

type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Query      any    `json:"query"`
			Multi      bool   `json:"multi"`
			IncludeAll bool   `json:"includeAll"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
	Panels []panel `json:"panels"`
}

// grafanaVars stand for Grafana's variables when the queries are handed to promtool.
var grafanaVars = map[string]string{"$__rate_interval": "2m", "$__interval": "1m", "$__range": "1d",
	"$window": "1d", "$job": "hrsync", "$instance": ".*", "$account": ".*"}

var grafanaVar = regexp.MustCompile(`\$\w+`)

var hrsyncSelector = regexp.MustCompile(`\b(hrsync_[a-z_]+)(\{[^}]*\})?`)

func grafanaCmd(args []string, p *problems) error {
	fs := newFlags("grafana")
	queries := fs.String("queries", "", "write every query, variables replaced, as a Prometheus rules file here (for promtool check rules)")
	provisioning := fs.String("provisioning", "", "Grafana's provisioning directory (datasources/, dashboards/)")
	compose := fs.String("compose", "", "the compose file that mounts the dashboard")
	sqlOut := fs.String("sql", "", "a SQL dashboard's: write every query, macros and variables replaced, as a SQL script here")
	database := fs.String("database", "", "a SQL dashboard's: run every query on this postgres:// warehouse with psql")
	schema := fs.String("schema", "hr", "a SQL dashboard's: the warehouse schema ${schema} stands for")
	from := fs.String("from", "", "a SQL dashboard's: the time range's start, YYYY-MM-DD or RFC 3339 (default: -to less 2 years)")
	to := fs.String("to", "", "a SQL dashboard's: the time range's end (default: now)")
	file := oneArg(fs, args)
	r := sqlRun{database: *database, schema: *schema, sqlOut: *sqlOut, to: time.Now().UTC()}
	for _, t := range []struct {
		flag string
		v    *time.Time
	}{{*to, &r.to}, {*from, &r.from}} {
		if t.flag == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.flag)
		if err != nil {
			if v, err = time.Parse(time.DateOnly, t.flag); err != nil {
				return fmt.Errorf("-from/-to %q: want YYYY-MM-DD or RFC 3339", t.flag)
			}
		}
		*t.v = v
	}
	if r.from.IsZero() {
		r.from = r.to.AddDate(-2, 0, 0)
	}
	return checkGrafana(file, *provisioning, *compose, *queries, r, p)
}

func checkGrafana(file, provisioning, compose, queriesOut string, r sqlRun, p *problems) error {
	name := filepath.Base(file)
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if isSQLDashboard(data) {
		return checkSQLDashboard(file, data, provisioning, compose, r, p)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		p.addf("%s: %v", name, err)
		return nil
	}
	if !hasInput(d) {
		p.addf("%s: __inputs has no DS_PROMETHEUS prometheus input", name)
	}
	vars := map[string]int{}
	for i, v := range d.Templating.List {
		vars[v.Name] = i
	}
	if i, ok := vars["DS_PROMETHEUS"]; !ok || d.Templating.List[i].Type != "datasource" || d.Templating.List[i].Query != "prometheus" {
		p.addf("%s: the DS_PROMETHEUS variable must be a prometheus datasource variable (it resolves ${DS_PROMETHEUS} when provisioned)", name)
	}
	if i, ok := vars["account"]; !ok || !d.Templating.List[i].Multi || !d.Templating.List[i].IncludeAll ||
		!strings.Contains(fmt.Sprint(d.Templating.List[i].Query), "label_values(hrsync_sync_runs_total, account)") {
		p.addf("%s: no multi-select account variable with All from label_values(hrsync_sync_runs_total, account)", name)
	}

	type expr struct{ where, text string }
	var exprs []expr
	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, pn := range ps {
			where := fmt.Sprintf("%s: panel %q", name, pn.Title)
			if pn.ID == nil || ids[*pn.ID] {
				p.addf("%s: missing or duplicate id", where)
			} else {
				ids[*pn.ID] = true
			}
			if g := pn.GridPos; g == nil || g.H == nil || g.W == nil || g.X == nil || g.Y == nil || *g.X+*g.W > 24 {
				p.addf("%s: gridPos needs h, w, x, y within 24 columns", where)
			}
			walk(pn.Panels)
			if pn.Type == "row" {
				continue
			}
			if pn.Datasource == nil || pn.Datasource.UID != "${DS_PROMETHEUS}" {
				p.addf("%s: datasource is not ${DS_PROMETHEUS}", where)
			}
			if len(pn.Targets) == 0 {
				p.addf("%s: no queries", where)
			}
			for _, t := range pn.Targets {
				if t.Datasource == nil || t.Datasource.UID != "${DS_PROMETHEUS}" {
					p.addf("%s: a query's datasource is not ${DS_PROMETHEUS}", where)
				}
				exprs = append(exprs, expr{where, t.Expr})
			}
		}
	}
	walk(d.Panels)
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			exprs = append(exprs, expr{fmt.Sprintf("%s: annotation %q", name, a.Name), a.Expr})
		}
	}

	// The PromQL, for promtool, and the account filter on every per-account selector.
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard-queries\n    rules:\n")
	for i, e := range exprs {
		if strings.TrimSpace(e.text) == "" {
			p.addf("%s: empty query", e.where)
		}
		for _, m := range hrsyncSelector.FindAllStringSubmatch(e.text, -1) {
			if m[1] != "hrsync_build_info" && !strings.Contains(m[2], `account=~"$account"`) {
				p.addf(`%s: %s is not filtered by account=~"$account"`, e.where, m[1])
			}
		}
		q := grafanaVar.ReplaceAllStringFunc(e.text, func(v string) string {
			if r, ok := grafanaVars[v]; ok {
				return r
			}
			p.addf("%s: unknown variable %s in %q", e.where, v, e.text)
			return v
		})
		js, _ := json.Marshal(q)
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, js)
	}
	if queriesOut != "" {
		if err := os.WriteFile(queriesOut, []byte(rules.String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "ok: %s: %d panels, %d queries\n", name, len(ids), len(exprs))
	if provisioning != "" {
		checkProvisioning(provisioning, compose, p)
	}
	return nil
}

func hasInput(d dashboard) bool {
	for _, in := range d.Inputs {
		if in.Name == "DS_PROMETHEUS" && in.PluginID == "prometheus" {
			return true
		}
	}
	return false
}

// checkProvisioning: a default Prometheus datasource at the compose stack's Prometheus, and a
// dashboard provider reading the folder the compose file mounts the dashboard into.
func checkProvisioning(dir, compose string, p *problems) {
	var ds struct {
		APIVersion  int `json:"apiVersion"`
		Datasources []struct {
			Type      string `json:"type"`
			URL       string `json:"url"`
			IsDefault bool   `json:"isDefault"`
		} `json:"datasources"`
	}
	var prov struct {
		Providers []struct {
			Type    string `json:"type"`
			Options struct {
				Path string `json:"path"`
			} `json:"options"`
		} `json:"providers"`
	}
	var stack struct {
		Services map[string]struct {
			Volumes []string `json:"volumes"`
		} `json:"services"`
	}
	if err := readYAMLFiles([]yamlFile{{filepath.Join(dir, "datasources", "prometheus.yaml"), &ds}, {filepath.Join(dir, "dashboards", "hrsync.yaml"), &prov}, {compose, &stack}}); err != nil {
		p.addf("grafana provisioning: %v", err)
		return
	}
	found := false
	for _, d := range ds.Datasources {
		found = found || (d.Type == "prometheus" && d.IsDefault && d.URL == "http://prometheus:9090")
	}
	if ds.APIVersion != 1 || !found {
		p.addf("grafana provisioning: datasources: want a default prometheus datasource at http://prometheus:9090")
	}
	var mounted string
	for _, v := range stack.Services["grafana"].Volumes {
		if rest, ok := strings.CutPrefix(v, "./grafana/hrsync-dashboard.json:"); ok {
			mounted, _, _ = strings.Cut(rest, ":")
		}
	}
	read := false
	for _, pr := range prov.Providers {
		read = read || (pr.Type == "file" && mounted != "" && path.Dir(mounted) == path.Clean(pr.Options.Path))
	}
	if !read {
		p.addf("grafana provisioning: the compose file mounts the dashboard at %q, which no file provider of dashboards/hrsync.yaml reads", mounted)
	}
}

// kubernetesSDAsStatic writes a Prometheus configuration with each scrape job's
// kubernetes_sd_configs replaced by a static target, for a promtool built without Kubernetes
// service discovery (Debian's): the relabelling and the rules still get checked.
func kubernetesSDAsStatic(args []string, p *problems) error {
	if len(args) != 2 {
		usage()
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		p.addf("%s: %v", args[0], err)
		return nil
	}
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		job, _ := j.(map[string]any)
		if _, ok := job["kubernetes_sd_configs"]; !ok {
			p.addf("%s: scrape job %v has no kubernetes_sd_configs", args[0], job["job_name"])
			continue
		}
		delete(job, "kubernetes_sd_configs")
		job["static_configs"] = []any{map[string]any{"targets": []any{"hrsync:9090"}}}
	}
	if len(jobs) == 0 {
		p.addf("%s: no scrape_configs", args[0])
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(args[1], out, 0o644)
}

// yamlFile is a file read into v by readYAMLFiles.
type yamlFile struct {
	path string
	v    any
}

// readYAMLFiles reads each file into its value, stopping at the first that cannot be read or
// parsed (the provisioning checks of both dashboards read theirs so).
func readYAMLFiles(files []yamlFile) error {
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err == nil {
			err = yaml.Unmarshal(data, f.v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
