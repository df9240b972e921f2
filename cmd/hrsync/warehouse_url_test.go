package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// A libpq key=value string, or any other form hrsync does not read, in HRSYNC_WAREHOUSE_URL
// stops every command that opens the warehouse with a non-zero exit and one line saying what
// to write instead: no file is created (it was taken for a SQLite file name, named after the
// string), and the password is printed nowhere.
func TestKeyValueWarehouseStringIsRefused(t *testing.T) {
	const secret = "Hunter2-Sekret-9"
	dir := t.TempDir()
	t.Chdir(dir)
	tests := []struct {
		name, url, says string
	}{
		{"libpq key=value", "host=db.internal port=5432 dbname=hr user=hrsync password=" + secret, "key=value"},
		{"key=value, quoted", "dbname=hr password='" + secret + " x'", "key=value"},
		{"another scheme", "mysql://hrsync:" + secret + "@db/hr", "URL scheme"},
		{"postgres: missing //", "postgres:/hrsync:" + secret + "@db/hr", `bad warehouse URL "postgres:/hrsync:xxxxx@db/hr": looks like a Postgres URL missing "//" after "postgres:": use postgres://hrsync:xxxxx@db/hr`},
		{"postgresql: missing //", "postgresql:db/hr", `bad warehouse URL "postgresql:db/hr": looks like a Postgres URL missing "//" after "postgresql:": use postgresql://db/hr`},
		{"postgres missing :", "postgres//hrsync:" + secret + "@db/hr", `looks like a Postgres URL missing the ":" of "postgres://": use postgres://hrsync:xxxxx@db/hr`},
		{"host:port alone", "db.internal:5432/hr", `looks like a Postgres host:port without its scheme: use postgres://db.internal:5432/hr`},
	}
	for _, tt := range tests {
		for _, args := range [][]string{{"migrate"}, {"sync"}, {"serve"}, {"onboard", "x.csv"}, {"demo", "--no-serve", "--employees", "1"}} {
			t.Run(tt.name+"/"+args[0], func(t *testing.T) {
				env := []string{"HRSYNC_WAREHOUSE_URL=" + tt.url, "HRSYNC_SOURCE_URL=http://127.0.0.1:1",
					"HRSYNC_SOURCE_API_KEY=k", "HRSYNC_SERVE_ADDR=127.0.0.1:0", "HRSYNC_SERVE_API_KEYS=serve-key-0b8e2f6a4c1d9e7f3a5b"}
				var out, logs bytes.Buffer
				err := run(context.Background(), args, env, &out, &logs)
				if err == nil || exitCode(err) == 0 {
					t.Fatalf("exit 0; out:\n%s", out.String())
				}
				line := "hrsync: " + config.OneLine(err.Error()) // what main prints
				if !strings.Contains(line, tt.says) || !strings.Contains(line, "warehouse") {
					t.Errorf("message %q, want it to say %q", line, tt.says)
				}
				for _, s := range []string{line, out.String(), logs.String()} {
					if strings.Contains(s, secret) {
						t.Errorf("the password is printed: %s", s)
					}
				}
			})
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files were created: %q", names)
	}
}

// migrate prints a Postgres warehouse without its password, whether in the URL's user info or
// its password parameter.
func TestMigratePrintsNoPassword(t *testing.T) {
	t.Parallel()
	const secret = "Hunter2-Sekret-9"
	for _, url := range []string{
		"postgres://hrsync:" + secret + "@127.0.0.1:1/hr?connect_timeout=1",
		"postgres://hrsync@127.0.0.1:1/hr?password=" + secret + "&sslpassword=" + secret + "&connect_timeout=1",
	} {
		var out, logs bytes.Buffer
		err := run(context.Background(), []string{"migrate"}, []string{"HRSYNC_WAREHOUSE_URL=" + url}, &out, &logs)
		if err == nil {
			t.Fatal("migrate against a closed port succeeded")
		}
		for _, s := range []string{err.Error(), out.String(), logs.String()} {
			if strings.Contains(s, secret) {
				t.Errorf("the password is printed: %s", s)
			}
		}
	}
}
