package sink_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// TestPagesSendOnlySent: a page's statement sends a row that keeps sent as its id and sent
// only (and the row's origin, the version and the Total), every other column NULL; and serve's
// answers are what they were, for every declared collection, to full access and to keys denied
// each class of personal data or some members: each record of a page is the bytes its own
// record's answer gives (read with every column, as pages were before). The warehouse has rows
// with sent, rows without it (as a row stored before sent was kept; an employee created here)
// and a row whose sent is not an object (edited by hand, not served from): a page that dropped
// a column one of them is answered from gives another answer.
func TestPagesSendOnlySent(t *testing.T) {
	t.Parallel()
	const employees, records = 30, 12
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
			fillAsSyncedN(t, s, employees, records)
			if _, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Local", LastName: "Made", Email: "local@example.com",
				JobTitle: "Engineer", JoinDate: "2024-02-29"}); err != nil {
				t.Fatal(err)
			}
			db := sinktest.DB(s)
			for _, r := range sink.Loadable() {
				// A row as stored before sent was kept; a row whose sent is not an object.
				if _, err := db.ExecContext(ctx, `UPDATE `+string(r)+` SET sent = NULL WHERE id % 3 = 0`); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, `UPDATE `+string(r)+` SET sent = '[1]' WHERE id = 2`); err != nil {
					t.Fatal(err)
				}
			}

			// The statement: NULL in every column but id and sent where the row keeps sent.
			for _, st := range sink.ReadStatements(s) {
				if st.Name != "page" {
					continue
				}
				withSent, without := pageRows(t, db, st)
				if withSent == 0 || without == 0 {
					t.Fatalf("%s: %d rows with sent, %d without: the test reads nothing", st.Table, withSent, without)
				}
			}

			// The answers.
			keys := []server.Key{{Name: "full", Key: sentOnlyKey("full")},
				{Name: "deny", Key: sentOnlyKey("deny"), Scope: server.Scope{Deny: []string{"email", "name", "line_manager.id"}}},
				{Name: "fields", Key: sentOnlyKey("fields"), Scope: server.Scope{Fields: []string{"id", "first_name", "department.name", "**.id"}}}}
			for _, c := range v1.Classes {
				keys = append(keys, server.Key{Name: "deny-" + c.String(), Key: sentOnlyKey("deny-" + c.String()),
					Scope: server.Scope{DenyClasses: []v1.Class{c}}})
			}
			// The answers over the store, and over the same store read with every column (no
			// answer cache: every answer read).
			opts := server.Options{Keys: keys, ETagSalt: "sent-only", CacheBytes: 0}
			h, err := server.NewHandler(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			before, err := server.NewHandler(sink.FullPages{Store: s}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range sink.Loadable() {
				for _, k := range keys {
					for _, q := range []string{"page=1&per_page=100", "page=2&per_page=7"} {
						path := fmt.Sprintf("/v1/%s?%s", r, q)
						got, want := sentOnlyAnswer(t, h, k.Key, path), sentOnlyAnswer(t, before, k.Key, path)
						if got != want {
							t.Errorf("%s to key %s:\n%s\nwith every column read:\n%s", path, k.Name, got, want)
						}
						if q == "page=1&per_page=100" && strings.Count(got, `"id":`) < 3 {
							t.Errorf("%s: too few records to tell: %.200s", path, got)
						}
					}
				}
			}
		})
	}
}

func sentOnlyKey(name string) string { return "sent-only-" + name + "-key-7d2e9b4c1a6f3e8d0b5a" }

// pageRows runs the page statement st over the whole table and checks that a row that keeps
// sent has NULL in every column of its record but id and sent; it counts the rows with sent and
// those without.
func pageRows(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, st sink.ReadStatement) (withSent, without int) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), st.SQL, 0, int64(1)<<62, 1000)
	if err != nil {
		t.Fatalf("%s page: %v", st.Table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	sentAt := -1
	for i, c := range cols {
		if c == "sent" {
			sentAt = i
		}
	}
	if sentAt < 0 {
		t.Fatalf("%s page: no sent column among %v", st.Table, cols)
	}
	cells := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range cells {
		dest[i] = &cells[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		if cells[sentAt] == nil {
			without++
			continue
		}
		withSent++
		// The record's columns are those before origin, the version and the Total.
		for i, c := range cells[:len(cells)-3] {
			if i != 0 && i != sentAt && c != nil {
				t.Errorf("%s page: row %s keeps sent, and its column %d (%s) is sent too: %.60q", st.Table, cells[0], i, cols[i], c)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return withSent, without
}

// sentOnlyAnswer is the body of the answer to path.
func sentOnlyAnswer(t *testing.T, h http.Handler, key, path string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("X-Api-Key", key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("%s: %d %.200s", path, w.Code, w.Body)
	}
	return w.Body.String()
}
