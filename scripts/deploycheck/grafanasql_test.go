package main

import (
	"bytes"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

const hrDashboard = "deploy/grafana/hr-dashboard.json"

// TestGrafanaHR: the HR overview dashboard and its provisioning pass; each fault is named.
func TestGrafanaHR(t *testing.T) {
	const (
		ds = "deploy/grafana/provisioning/datasources/warehouse.yaml"
	)
	checkKit(t, "", []string{"deploy"}, []kitCase{
		{"the real dashboard and provisioning pass", nil, "", false},
		{"a panel on another datasource", []edit{{hrDashboard, "\"id\": 2,\n      \"title\": \"FTE by department\",\n      \"type\": \"bargauge\",\n      \"description\": \"Full-time equivalents by department at the end of the range's last month (model_headcount_monthly).\",\n      \"datasource\": {\n        \"type\": \"grafana-postgresql-datasource\",\n        \"uid\": \"${DS_POSTGRES}\"", "\"id\": 2,\n      \"title\": \"FTE by department\",\n      \"type\": \"bargauge\",\n      \"description\": \"Full-time equivalents by department at the end of the range's last month (model_headcount_monthly).\",\n      \"datasource\": {\n        \"type\": \"grafana-postgresql-datasource\",\n        \"uid\": \"warehouse\""}}, `panel "FTE by department": datasource is not ${DS_POSTGRES}`, false},
		{"a query reading names", []edit{{hrDashboard, `SELECT employee_id AS \"Employee id\"`, `SELECT employee_id AS \"Employee id\", (SELECT last_name FROM ${schema}.employees e WHERE e.id = employee_id) AS n`}}, "reads last_name: the dashboard shows ids and departments, no names", false},
		{"a table named without the schema variable", []edit{{hrDashboard, `FROM ${schema}.model_turnover_monthly`, `FROM model_turnover_monthly`}}, "a table not named through ${schema}", false},
		{"a macro Grafana does not have", []edit{{hrDashboard, `WHERE $__timeFilter(month)\nORDER BY month`, `WHERE $__timeFilters(month)\nORDER BY month`}}, "unknown macro or variable $__timeFilters(month)", false},
		{"a datasource password compose does not give", []edit{{ds, "password: $GRAFANA_DB_PASSWORD", "password: $WAREHOUSE_PASSWORD"}}, "its password from a variable the compose file gives grafana", false},
		{"the warehouse owner's login", []edit{{ds, "user: grafana_hr", "user: hrsync"}}, `logs in as "hrsync", the warehouse's owner`, false},
		{"the dashboard not mounted", []edit{{"deploy/compose.yaml", "      - ./grafana/hr-dashboard.json:/var/lib/grafana/dashboards/hrsync/hr-dashboard.json:ro\n", ""}}, "the compose file mounts hr-dashboard.json", false},
	}, func(t *testing.T, dst string, p *problems) error {
		return checkGrafana(filepath.Join(dst, hrDashboard), filepath.Join(dst, "deploy/grafana/provisioning"), filepath.Join(dst, "deploy/compose.yaml"), "",
			sqlRun{schema: "hr", sqlOut: filepath.Join(dst, "q.sql"), from: time.Now().AddDate(-2, 0, 0), to: time.Now()}, p)
	})
}

// testDatabase is the Postgres server the tests run on (HRSYNC_TEST_DATABASE_URL, as for
// hrsync's own tests, or the local server), or skips when psql or a server is missing.
func testDatabase(t *testing.T) string {
	t.Helper()
	url := os.Getenv("HRSYNC_TEST_DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("no psql: the dashboard's queries are not run (apt-get install postgresql-client)")
	}
	if out, err := exec.Command("psql", "-X", "-q", "-d", url, "-c", "SELECT 1").CombinedOutput(); err != nil {
		t.Skipf("no Postgres server answers at %s (set HRSYNC_TEST_DATABASE_URL): %v %s", redact(url), err, out)
	}
	return url
}

func redact(url string) string { return regexp.MustCompile(`:[^:@/]*@`).ReplaceAllString(url, ":***@") }

// psqlScript runs script on url in one transaction.
func psqlScript(t *testing.T, url, script string) {
	t.Helper()
	cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-d", url)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}

// migratedWarehouse is a schema of the server migrated by the repository's migrations
// (schema/postgres, in order, as hrsync migrate applies them), with a small account: two
// departments, three people from 2023, a leaver in February 2025. Where the absence models are
// not there yet (migration 0023), tables of their columns stand in for them.
func migratedWarehouse(t *testing.T, url string) string {
	t.Helper()
	schema := fmt.Sprintf("deploycheck_hr_%d", time.Now().UnixNano())
	files, err := filepath.Glob(filepath.Join(repo, "schema/postgres/*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	sort.Strings(files)
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE SCHEMA %s;\nSET search_path TO %s;\n", schema, schema)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n;\n")
	}
	t.Cleanup(func() { _ = exec.Command("psql", "-X", "-q", "-d", url, "-c", "DROP SCHEMA "+schema+" CASCADE").Run() })
	psqlScript(t, url, b.String())
	psqlScript(t, url, "SET search_path TO "+schema+`;
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering');
INSERT INTO employees (id, status, company_join_date, leaving_date, department_id, listed, origin) VALUES
  (1, 'Current employee', '2023-03-01', NULL, 10, TRUE, 'source'),
  (2, 'Current employee', '2024-09-02', NULL, 20, TRUE, 'source'),
  (3, 'Ex-employee', '2023-05-01', '2025-02-28', 20, TRUE, 'source');
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, listed, origin) VALUES
  (1, '2023-03-01T06:00:00Z', NULL, 'Current employee', 10, TRUE, 'source'),
  (2, '2024-09-02T06:00:00Z', NULL, 'Current employee', 20, TRUE, 'source'),
  (3, '2023-05-01T06:00:00Z', NULL, 'Ex-employee', 20, TRUE, 'source');
DO $$ BEGIN
  IF to_regclass('model_bradford') IS NULL THEN
    CREATE TABLE model_absence_monthly (month date, department_id bigint, department text, sick_days numeric,
      other_leave_days numeric, holiday_days numeric, days_lost numeric, days_due numeric, fte numeric,
      days_lost_per_fte numeric, sickness_rate numeric);
    CREATE TABLE model_bradford (as_of date, employee_id bigint, department_id bigint, department text,
      spells bigint, days numeric, bradford numeric);
    INSERT INTO model_absence_monthly VALUES ('2025-05-01', 10, 'Sales', 2, 1, 3, 3, 21, 1, 3, 0.1429);
    INSERT INTO model_bradford VALUES ('2025-05-31', 1, 10, 'Sales', 2, 3, 12);
  END IF;
END $$;`)
	return schema
}

// TestGrafanaHRQueries runs every query of the HR overview dashboard, Grafana's macros
// replaced, on a migrated warehouse: a query a migration (or an edit) broke fails, naming its
// panel; the headcount's answer has rows.
func TestGrafanaHRQueries(t *testing.T) {
	url := testDatabase(t)
	schema := migratedWarehouse(t, url)
	run := hrRun(url, schema)
	said := runHRDashboard(t, run)
	for _, want := range []string{`panel "Headcount trend" query A: 13 rows`, `panel "Starters and leavers" query A: 2 rows`, `panel "Bradford factor, top 20" query A: `} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("the run does not say %q:\n%s", want, said.String())
		}
	}

	// A broken query is caught.
	dst := t.TempDir()
	copyTree(t, "deploy/grafana", dst)
	apply(t, dst, edit{hrDashboard, `sum(headcount) AS \"All\"`, `sum(head_count) AS \"All\"`})
	var p problems
	if err := checkGrafana(filepath.Join(dst, hrDashboard), "", "", "", run, &p); err != nil {
		t.Fatal(err)
	}
	wantProblems(t, &p, nil, `panel "Headcount trend" query A: does not run on the warehouse`)
}

// TestGrafanaReaderRole: deploy/compose/grafana-reader.sql, run twice as compose runs it (after
// each migrate), gives Grafana a role under which every query of the HR overview dashboard runs,
// and which cannot read the warehouse's tables of people; without the password it refuses.
func TestGrafanaReaderRole(t *testing.T) {
	url := testDatabase(t)
	schema := migratedWarehouse(t, url)
	t.Cleanup(func() {
		_ = exec.Command("psql", "-X", "-q", "-d", url, "-c", "DROP OWNED BY grafana_hr; DROP ROLE IF EXISTS grafana_hr").Run()
	})
	script := filepath.Join(repo, "deploy/compose/grafana-reader.sql")
	reader := func(password string) ([]byte, error) {
		cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "schema="+schema, "-d", url, "-f", script)
		cmd.Env = append(os.Environ(), "GRAFANA_DB_PASSWORD="+password)
		if password == "" {
			cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "GRAFANA_DB_PASSWORD=") })
		}
		return cmd.CombinedOutput()
	}
	if out, err := reader(""); err == nil || !strings.Contains(string(out), "GRAFANA_DB_PASSWORD is not set") {
		t.Errorf("without GRAFANA_DB_PASSWORD: %v %s, want refused", err, out)
	}
	password := fmt.Sprintf("pw%d", time.Now().UnixNano())
	for range 2 { // idempotent
		if out, err := reader(password); err != nil {
			t.Fatalf("grafana-reader.sql: %v\n%s", err, out)
		}
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.UserPassword("grafana_hr", password)
	asReader := u.String()

	said := runHRDashboard(t, hrRun(asReader, schema))
	if !strings.Contains(said.String(), `panel "Headcount trend" query A: 13 rows`) {
		t.Errorf("as grafana_hr, the headcount has no rows:\n%s", said.String())
	}
	// Its sessions compile nothing (grafana-reader.sql: ALTER ROLE … SET jit = off).
	if out, err := exec.Command("psql", "-X", "-At", "-d", asReader, "-c", "SHOW jit").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "off" {
		t.Errorf("as grafana_hr, jit is %q (%v), want off", strings.TrimSpace(string(out)), err)
	}
	for _, table := range []string{"employees", "sicknesses", "employees_history"} {
		if _, err := psqlCount(asReader, "SELECT * FROM "+schema+"."+table); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("grafana_hr reads %s: %v, want permission denied", table, err)
		}
	}
}

// hrRun runs the HR dashboard's queries on database in schema, over the months of
// migratedWarehouse's account.
func hrRun(database, schema string) sqlRun {
	return sqlRun{database: database, schema: schema, from: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)}
}

// runHRDashboard runs every query of the HR overview dashboard as run says, failing the test on
// any problem, and returns what the check said.
func runHRDashboard(t *testing.T, run sqlRun) *bytes.Buffer {
	t.Helper()
	var said bytes.Buffer
	out = &said
	defer func() { out = discard }()
	var p problems
	if err := checkGrafana(filepath.Join(repo, hrDashboard), "", "", "", run, &p); err != nil || p.any() {
		t.Fatalf("the dashboard's queries on %s: %v %q\n%s", redact(run.database), err, p.list, said.String())
	}
	return &said
}
