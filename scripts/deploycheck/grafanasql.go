package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The HR overview dashboard (deploy/grafana/hr-dashboard.json) reads the warehouse's people
// models with SQL on a Postgres datasource. What is checked: every panel on ${DS_POSTGRES},
// every query raw SQL naming its tables through the ${schema} variable, no query reading a
// name or an email (the dashboard shows ids and departments only), the compose stack's
// provisioning of the datasource and the dashboard — and, given a database, every query run
// there with Grafana's macros and variables replaced as Grafana replaces them: a query that
// a migration broke fails the check.

// sqlTarget is a Postgres panel's query.
type sqlTarget struct {
	RefID      string `json:"refId"`
	Datasource *dsRef `json:"datasource"`
	RawSQL     string `json:"rawSql"`
	RawQuery   bool   `json:"rawQuery"`
	Format     string `json:"format"`
}

type sqlPanel struct {
	ID         *int        `json:"id"`
	Title      string      `json:"title"`
	Type       string      `json:"type"`
	GridPos    *grid       `json:"gridPos"`
	Datasource *dsRef      `json:"datasource"`
	Targets    []sqlTarget `json:"targets"`
}

type sqlDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []sqlPanel `json:"panels"`
}

// postgresPlugin is Grafana's Postgres datasource (its id since Grafana 10.2).
const postgresPlugin = "grafana-postgresql-datasource"

// isSQLDashboard: the dashboard takes a Postgres datasource (DS_POSTGRES).
func isSQLDashboard(data []byte) bool {
	var d sqlDashboard
	if json.Unmarshal(data, &d) != nil {
		return false
	}
	for _, in := range d.Inputs {
		if in.Name == "DS_POSTGRES" {
			return true
		}
	}
	return false
}

// sqlRun is how the queries are run: on database (a postgres:// URL, with psql) in schema,
// over the time range from-to; database "": not run.
type sqlRun struct {
	database, schema string
	from, to         time.Time
	sqlOut           string // the queries, macros replaced, written here as a SQL script
}

// personal are columns no query of the dashboard may read: it shows ids and departments only.
var personal = regexp.MustCompile(`(?i)\b(first_name|last_name|known_as|email|full_name|date_of_birth)\b`)

// grafanaMacro is a Grafana SQL macro or variable in a query.
var grafanaMacro = regexp.MustCompile(`\$__(\w+)(\(([^()]*)\))?|\$\{(\w+)\}|\$(\w+)`)

// expandSQL replaces Grafana's macros and variables in q as Grafana's Postgres datasource does
// (https://grafana.com/docs/grafana/latest/datasources/postgres/query-editor/#macros) for the
// time range from-to and the schema variable; an unknown one is a problem.
func expandSQL(q string, r sqlRun, where string, p *problems) string {
	ts := func(t time.Time) string { return "'" + t.UTC().Format(time.RFC3339) + "'" }
	return grafanaMacro.ReplaceAllStringFunc(q, func(m string) string {
		s := grafanaMacro.FindStringSubmatch(m)
		switch {
		case s[1] == "timeFilter" && strings.TrimSpace(s[3]) != "":
			return strings.TrimSpace(s[3]) + " BETWEEN " + ts(r.from) + " AND " + ts(r.to)
		case s[1] == "timeFrom" && s[2] != "":
			return ts(r.from)
		case s[1] == "timeTo" && s[2] != "":
			return ts(r.to)
		case s[1] == "unixEpochFrom" && s[2] != "":
			return strconv.FormatInt(r.from.Unix(), 10)
		case s[1] == "unixEpochTo" && s[2] != "":
			return strconv.FormatInt(r.to.Unix(), 10)
		case s[4] == "schema" || s[5] == "schema":
			return r.schema
		}
		p.addf("%s: unknown macro or variable %s", where, m)
		return m
	})
}

func checkSQLDashboard(file string, data []byte, provisioning, compose string, r sqlRun, p *problems) error {
	name := filepath.Base(file)
	var d sqlDashboard
	if err := json.Unmarshal(data, &d); err != nil {
		p.addf("%s: %v", name, err)
		return nil
	}
	input := false
	for _, in := range d.Inputs {
		input = input || (in.Name == "DS_POSTGRES" && in.PluginID == postgresPlugin)
	}
	if !input {
		p.addf("%s: __inputs has no DS_POSTGRES %s input", name, postgresPlugin)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type + " " + fmt.Sprint(v.Query)
	}
	if vars["DS_POSTGRES"] != "datasource "+postgresPlugin {
		p.addf("%s: the DS_POSTGRES variable must be a %s datasource variable", name, postgresPlugin)
	}
	if !strings.HasPrefix(vars["schema"], "custom ") {
		p.addf("%s: no custom schema variable (the warehouse's schema, warehouse.schema)", name)
	}

	type query struct{ where, sql string }
	var queries []query
	ids := map[int]bool{}
	for _, pn := range d.Panels {
		where := fmt.Sprintf("%s: panel %q", name, pn.Title)
		if pn.ID == nil || ids[*pn.ID] {
			p.addf("%s: missing or duplicate id", where)
		} else {
			ids[*pn.ID] = true
		}
		if g := pn.GridPos; g == nil || g.H == nil || g.W == nil || g.X == nil || g.Y == nil || *g.X+*g.W > 24 {
			p.addf("%s: gridPos needs h, w, x, y within 24 columns", where)
		}
		if pn.Type == "row" {
			continue
		}
		if pn.Datasource == nil || pn.Datasource.UID != "${DS_POSTGRES}" {
			p.addf("%s: datasource is not ${DS_POSTGRES}", where)
		}
		if len(pn.Targets) == 0 {
			p.addf("%s: no queries", where)
		}
		for _, t := range pn.Targets {
			tw := where + " query " + t.RefID
			switch {
			case t.Datasource == nil || t.Datasource.UID != "${DS_POSTGRES}":
				p.addf("%s: datasource is not ${DS_POSTGRES}", tw)
			case !t.RawQuery || strings.TrimSpace(t.RawSQL) == "":
				p.addf("%s: not raw SQL", tw)
			case t.Format != "table" && t.Format != "time_series":
				p.addf("%s: format %q: want table or time_series", tw, t.Format)
			case t.Format == "time_series" && !regexp.MustCompile(`(?i)\bAS time\b`).MatchString(t.RawSQL):
				p.addf("%s: a time series selects no column named time", tw)
			case regexp.MustCompile(`(?i)\b(FROM|JOIN)\s+(model_|hr\.)`).MatchString(t.RawSQL):
				p.addf("%s: a table not named through ${schema} (FROM ${schema}.model_…)", tw)
			}
			if m := personal.FindString(t.RawSQL); m != "" {
				p.addf("%s: reads %s: the dashboard shows ids and departments, no names", tw, m)
			}
			queries = append(queries, query{tw, t.RawSQL})
		}
	}

	var script strings.Builder
	var expanded []query
	for _, q := range queries {
		sql := expandSQL(q.sql, r, q.where, p)
		expanded = append(expanded, query{q.where, sql})
		fmt.Fprintf(&script, "-- %s\n%s;\n\n", q.where, sql)
	}
	if r.sqlOut != "" {
		if err := os.WriteFile(r.sqlOut, []byte(script.String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "ok: %s: %d panels, %d queries\n", name, len(ids), len(queries))
	if r.database != "" {
		for _, q := range expanded {
			n, err := psqlCount(r.database, q.sql)
			if err != nil {
				p.addf("%s: does not run on the warehouse: %v", q.where, err)
				continue
			}
			fmt.Fprintf(out, "ok: %s: %d rows\n", q.where, n)
		}
	}
	if provisioning != "" {
		checkWarehouseProvisioning(name, provisioning, compose, p)
	}
	return nil
}

// psqlCount runs query on database with psql and returns how many rows it gave.
func psqlCount(database, query string) (int, error) {
	cmd := exec.Command("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database,
		"-c", "SELECT count(*) FROM (\n"+query+"\n) AS q")
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(b)))
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// checkWarehouseProvisioning: a Postgres datasource at the compose stack's warehouse, and the
// dashboard mounted where the file provider of dashboards/hrsync.yaml reads.
func checkWarehouseProvisioning(dashboard, dir, compose string, p *problems) {
	var ds struct {
		APIVersion  int `json:"apiVersion"`
		Datasources []struct {
			Type     string            `json:"type"`
			URL      string            `json:"url"`
			User     string            `json:"user"`
			JSONData map[string]any    `json:"jsonData"`
			Secure   map[string]string `json:"secureJsonData"`
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
			Volumes     []string          `json:"volumes"`
			Environment map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := readYAMLFiles([]yamlFile{{filepath.Join(dir, "datasources", "warehouse.yaml"), &ds}, {filepath.Join(dir, "dashboards", "hrsync.yaml"), &prov}, {compose, &stack}}); err != nil {
		p.addf("grafana provisioning: %v", err)
		return
	}
	found := false
	for _, d := range ds.Datasources {
		found = found || (d.Type == postgresPlugin && d.URL == "postgres:5432" && d.JSONData["database"] == "warehouse" &&
			strings.HasPrefix(d.Secure["password"], "$") && stack.Services["grafana"].Environment[strings.TrimPrefix(d.Secure["password"], "$")] != "")
		if owner := stack.Services["postgres"].Environment["POSTGRES_USER"]; d.Type == postgresPlugin && (d.User == "" || d.User == owner) {
			p.addf("grafana provisioning: datasources/warehouse.yaml logs in as %q, the warehouse's owner: give Grafana the read-only role of deploy/compose/grafana-reader.sql", owner)
		}
	}
	if ds.APIVersion != 1 || !found {
		p.addf("grafana provisioning: datasources/warehouse.yaml: want a %s datasource at postgres:5432, database warehouse, its password from a variable the compose file gives grafana", postgresPlugin)
	}
	var mounted string
	for _, v := range stack.Services["grafana"].Volumes {
		if rest, ok := strings.CutPrefix(v, "./grafana/"+dashboard+":"); ok {
			mounted, _, _ = strings.Cut(rest, ":")
		}
	}
	read := false
	for _, pr := range prov.Providers {
		read = read || (pr.Type == "file" && mounted != "" && path.Dir(mounted) == path.Clean(pr.Options.Path))
	}
	if !read {
		p.addf("grafana provisioning: the compose file mounts %s at %q, which no file provider of dashboards/hrsync.yaml reads", dashboard, mounted)
	}
}
