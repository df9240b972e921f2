package sink_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

var (
	testMark  = sink.ScratchMark{AppID: 0x74657374, Comment: "made by the demo warehouse tests, which drop and remake it"} // "test"
	otherMark = sink.ScratchMark{AppID: 0x6f746872, Comment: "made by another tool"}                                       // "othr"
)

// scratchPlace is where a scratch warehouse goes in a test: a file in the test's temp dir, or
// a fresh schema on the test server.
type scratchPlace struct {
	backend string
	url     string
	opts    sink.Options
	path    string  // SQLite
	db      *sql.DB // Postgres: for looking at the schema from outside
}

func newScratchPlace(t *testing.T, backend string) scratchPlace {
	t.Helper()
	p := scratchPlace{backend: backend}
	if backend == "sqlite" {
		p.path = filepath.Join(t.TempDir(), "scratch.db")
		p.url = p.path
		return p
	}
	p.url, p.opts.Schema = sinktest.Postgres(t)
	db, err := sql.Open("postgres", p.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p.db = db
	return p
}

// warehouse makes a migrated warehouse there holding one employee, and closes it.
func (p scratchPlace) warehouse(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := sink.Migrate(ctx, p.url, p.opts); err != nil {
		t.Fatal(err)
	}
	s, err := sink.Open(ctx, p.url, p.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", JoinDate: "2025-01-01"}); err != nil {
		t.Fatal(err)
	}
}

// scratch makes a scratch warehouse with mark there, as its owner used it: migrated, holding one
// employee.
func (p scratchPlace) scratch(t *testing.T, mark sink.ScratchMark) {
	t.Helper()
	if err := sink.ResetScratch(context.Background(), p.url, p.opts, mark); err != nil {
		t.Fatal(err)
	}
	p.warehouse(t)
}

// snapshot describes everything there: for SQLite the files of the directory and their contents,
// for Postgres the schema's comment, tables and row counts.
func (p scratchPlace) snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	if p.backend == "sqlite" {
		entries, err := os.ReadDir(filepath.Dir(p.path))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				fmt.Fprintf(&b, "%s/\n", e.Name())
				continue
			}
			data, err := os.ReadFile(filepath.Join(filepath.Dir(p.path), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %x\n", e.Name(), sha256.Sum256(data))
		}
		return b.String()
	}
	ctx := context.Background()
	var comment sql.NullString
	err := p.db.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, p.opts.Schema).Scan(&comment)
	if errors.Is(err, sql.ErrNoRows) {
		return "no schema"
	} else if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "comment %v %q\n", comment.Valid, comment.String)
	for _, table := range p.tables(t) {
		var n int
		if err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM `+p.opts.Schema+`.`+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d\n", table, n)
	}
	return b.String()
}

// tables lists the tables there.
func (p scratchPlace) tables(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var rows *sql.Rows
	var err error
	if p.backend == "sqlite" {
		db, oerr := sql.Open("sqlite", "file:"+p.path+"?mode=ro")
		if oerr != nil {
			t.Fatal(oerr)
		}
		defer db.Close()
		rows, err = db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	} else {
		rows, err = p.db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, p.opts.Schema)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// marked reports whether what is there carries mark.
func (p scratchPlace) marked(t *testing.T, mark sink.ScratchMark) bool {
	t.Helper()
	ctx := context.Background()
	if p.backend == "sqlite" {
		db, err := sql.Open("sqlite", "file:"+p.path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var id int32
		if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id == mark.AppID
	}
	var comment sql.NullString
	if err := p.db.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, p.opts.Schema).Scan(&comment); err != nil {
		t.Fatal(err)
	}
	return comment.String == mark.Comment
}

func TestResetScratch(t *testing.T) {
	t.Parallel()
	const (
		made    = "made"    // an empty scratch warehouse, marked
		refused = "refused" // ErrNotScratch, nothing touched
		invalid = "invalid" // the mark is refused, nothing touched
	)
	tests := []struct {
		name  string
		only  string // a backend, when the case is one backend's
		setup func(t *testing.T, p scratchPlace)
		mark  sink.ScratchMark // default testMark
		want  string
	}{
		{name: "nothing there", want: made},
		{name: "its own, with data", setup: func(t *testing.T, p scratchPlace) { p.scratch(t, testMark) }, want: made},
		{name: "a real warehouse", setup: func(t *testing.T, p scratchPlace) { p.warehouse(t) }, want: refused},
		{name: "another tool's scratch", setup: func(t *testing.T, p scratchPlace) { p.scratch(t, otherMark) }, want: refused},
		{name: "a file that is not a database", only: "sqlite", setup: func(t *testing.T, p scratchPlace) {
			if err := os.WriteFile(p.path, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, want: refused},
		{name: "an empty file", only: "sqlite", setup: func(t *testing.T, p scratchPlace) {
			if err := os.WriteFile(p.path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, want: refused},
		{name: "a directory", only: "sqlite", setup: func(t *testing.T, p scratchPlace) {
			if err := os.Mkdir(p.path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, want: refused},
		{name: "a schema someone made", only: "postgres", setup: func(t *testing.T, p scratchPlace) {
			if _, err := p.db.Exec(`CREATE SCHEMA ` + p.opts.Schema + `; CREATE TABLE ` + p.opts.Schema + `.precious (id int); INSERT INTO ` + p.opts.Schema + `.precious VALUES (1)`); err != nil {
				t.Fatal(err)
			}
		}, want: refused},
		// A mark with 0 or "" would be found on anything: a real warehouse's file has
		// application_id 0, a schema without a comment has "".
		{name: "a mark without AppID", setup: func(t *testing.T, p scratchPlace) { p.warehouse(t) }, mark: sink.ScratchMark{Comment: testMark.Comment}, want: invalid},
		{name: "a mark without Comment", setup: func(t *testing.T, p scratchPlace) { p.warehouse(t) }, mark: sink.ScratchMark{AppID: testMark.AppID}, want: invalid},
	}
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				if tt.only != "" && tt.only != backend {
					continue
				}
				t.Run(tt.name, func(t *testing.T) {
					ctx := context.Background()
					p := newScratchPlace(t, backend)
					if tt.setup != nil {
						tt.setup(t, p)
					}
					mark := tt.mark
					if mark == (sink.ScratchMark{}) {
						mark = testMark
					}
					before := p.snapshot(t)
					err := sink.ResetScratch(ctx, p.url, p.opts, mark)
					switch tt.want {
					case made:
						if err != nil {
							t.Fatalf("resetScratch: %v", err)
						}
						if !p.marked(t, testMark) {
							t.Error("not marked")
						}
						if tables := p.tables(t); len(tables) != 0 {
							t.Errorf("not empty: tables %v", tables)
						}
						if backend == "sqlite" {
							for _, suffix := range []string{"-wal", "-shm", "-journal"} {
								if _, err := os.Lstat(p.path + suffix); !errors.Is(err, os.ErrNotExist) {
									t.Errorf("%s is left: %v", suffix, err)
								}
							}
						}
						// Made into a warehouse, it is a new one, and still the owner's.
						if _, err := sink.Migrate(ctx, p.url, p.opts); err != nil {
							t.Fatal(err)
						}
						s, err := sink.Open(ctx, p.url, p.opts)
						if err != nil {
							t.Fatal(err)
						}
						defer s.Close()
						if list, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 1}); err != nil || list.Total != 0 {
							t.Errorf("employees after the reset: %d (%v), want 0", list.Total, err)
						}
						if !p.marked(t, testMark) {
							t.Error("the mark did not survive Migrate")
						}
						return
					case refused:
						if !errors.Is(err, sink.ErrNotScratch) {
							t.Fatalf("resetScratch: %v, want sink.ErrNotScratch", err)
						}
						t.Log(err)
						if want := p.opts.Schema; backend == "postgres" && !strings.Contains(err.Error(), "schema "+want) {
							t.Errorf("the error does not name schema %s: %v", want, err)
						}
						if backend == "sqlite" && !strings.Contains(err.Error(), p.path) {
							t.Errorf("the error does not name %s: %v", p.path, err)
						}
					case invalid:
						if err == nil || errors.Is(err, sink.ErrNotScratch) {
							t.Fatalf("resetScratch with mark %+v: %v, want an invalid mark", mark, err)
						}
					}
					if after := p.snapshot(t); after != before {
						t.Errorf("touched:\nbefore %s\nafter  %s", before, after)
					}
				})
			}
		})
	}
}

// A refusal names the database it looked in, without its credentials.
func TestResetScratchNamesNoSecret(t *testing.T) {
	t.Parallel()
	raw, schemaName := sinktest.Postgres(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	const password = "s3cret-in-url"
	if _, ok := u.User.Password(); !ok && u.User != nil {
		u.User = url.UserPassword(u.User.Username(), password) // a trusting server ignores it
	}
	pw, _ := u.User.Password()
	p := scratchPlace{backend: "postgres", url: u.String(), opts: sink.Options{Schema: schemaName}}
	ctx := context.Background()
	if err := sink.ResetScratch(ctx, p.url, p.opts, otherMark); err != nil {
		if strings.Contains(err.Error(), "password") {
			t.Skipf("the server wants the real password: %v", err)
		}
		t.Fatal(err)
	}
	err = sink.ResetScratch(ctx, p.url, p.opts, testMark)
	if !errors.Is(err, sink.ErrNotScratch) {
		t.Fatalf("resetScratch: %v, want sink.ErrNotScratch", err)
	}
	if msg := err.Error(); (pw != "" && strings.Contains(msg, pw)) || strings.Contains(msg, "@") || !strings.Contains(msg, "postgres://"+u.Host+u.Path) {
		t.Errorf("the error names the credentials, or not the database: %s", msg)
	}
}

// The schema name is checked before it is put into SQL; a SQLite URL is checked as Open does.
func TestResetScratchRejectsBadPlaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct{ url, schema string }{
		{"postgres://localhost/x", "Robert'); DROP"},
		{"sqlite:", ""},
		{"", ""},
	} {
		if err := sink.ResetScratch(ctx, c.url, sink.Options{Schema: c.schema}, testMark); !errors.Is(err, sink.ErrBadURL) {
			t.Errorf("sink.ResetScratch(%q, schema %q): %v, want ErrBadURL", c.url, c.schema, err)
		}
	}
}
