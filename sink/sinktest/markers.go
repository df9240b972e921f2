package sinktest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// MarkersIn scans every column of every table of the warehouse (history, ledgers and JSON
// included), cast to text, for the markers (case ignored), and returns where each was found as
// "table.column: marker", sorted: what an erasure's test asserts is empty.
func MarkersIn(t testing.TB, s *sink.Store, markers []string) []string {
	t.Helper()
	ctx := context.Background()
	db := DB(s)
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	if s.Dialect() == schema.SQLite {
		q = `SELECT name FROM sqlite_master WHERE type = 'table'`
	}
	var tables []string
	if err := db.SelectContext(ctx, &tables, q); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 30 {
		t.Fatalf("found %d tables: %v", len(tables), tables)
	}
	lower := make([]string, len(markers))
	for i, m := range markers {
		lower[i] = strings.ToLower(m)
	}
	var found []string
	for _, table := range tables {
		rows, err := db.QueryxContext(ctx, `SELECT * FROM `+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				// Each value is made text and lowered once: the scan reads every row of the
				// warehouse, and was a sixteenth of the sink tests' own CPU when that was done per
				// marker.
				var text string
				switch v := v.(type) {
				case nil:
					continue
				case []byte:
					text = string(v)
				case string:
					text = v
				default:
					text = fmt.Sprint(v)
				}
				text = strings.ToLower(text)
				for j, m := range lower {
					if strings.Contains(text, m) {
						found = append(found, table+"."+cols[i]+": "+markers[j])
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// MarkersInFiles are the markers found in the bytes of a SQLite warehouse's files (the database,
// its -wal and -journal).
func MarkersInFiles(t testing.TB, s *sink.Store, markers []string) []string {
	t.Helper()
	var found []string
	for _, suffix := range []string{"", "-wal", "-journal"} {
		b, err := os.ReadFile(s.Location() + suffix)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				found = append(found, "hrsync.db"+suffix+": "+m)
			}
		}
	}
	return found
}

// QueryString runs the one-value query q (with ? placeholders) on the warehouse's own
// connections and gives its value as text: "<null>" for NULL.
func QueryString(t testing.TB, s *sink.Store, q string, args ...any) string {
	t.Helper()
	db := DB(s)
	var v any
	if err := db.QueryRowxContext(context.Background(), db.Rebind(q), args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	if v == nil {
		return "<null>"
	}
	return fmt.Sprint(v)
}

// Employees reads employees from their JSON, as the source sends them.
func Employees(t testing.TB, raws ...string) []v1.Employee {
	t.Helper()
	es := make([]v1.Employee, len(raws))
	for i, raw := range raws {
		if err := es[i].UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatalf("employee %s: %v", raw, err)
		}
	}
	return es
}
