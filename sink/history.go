package sink

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// History: a table declared with history (collections.go, historied) keeps every version of
// every row in <table>_history, with the period it was current in the warehouse (valid_from,
// valid_to). Triggers write it, so syncs, creates and direct SQL edits are all recorded. The
// history tables are made by the migrations (a column added to a table is added to its history
// in the same migration: TestDeclarationsMatchMigrations fails otherwise); the triggers are not
// written by hand: each dialect makes them from the declaration (dialect.historyTriggers), and
// migrate makes them again whenever what the warehouse holds differs from what this build
// declares, in the transaction of the last migration it applies (or, with none to apply, in a
// transaction of its own), so no write ever sees a table without its triggers.

// trigger is one trigger a dialect makes: its name, the table it is on, the statements that
// make it, and its definition as the dialect reads it back (dialect.historyTriggerDefs).
type trigger struct {
	name, table string
	create      []string
	def         string
}

// historyCols are the columns of t's history a version copies: every column of the table but
// synced_at (a version's valid_from is when it was written).
func (t *table) historyCols() []string {
	return append(colNames(t.cols), "listed", "origin", "deleted_at")
}

// historyTriggers are the history triggers of the declared tables ts (this build's: tables).
func historyTriggers(d dialect, ts []*table) []trigger {
	var out []trigger
	for _, t := range ts {
		if t.history {
			out = append(out, d.historyTriggers(t.name, t.historyCols())...)
		}
	}
	return out
}

// staleHistory are the statements that make the warehouse's history triggers the triggers
// want: none when they already are. A trigger named as a history trigger (<table>_history_<op>)
// that want lacks is dropped.
func staleHistory(ctx context.Context, q querier, d dialect, want []trigger) ([]string, error) {
	have, err := d.historyTriggerDefs(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read history triggers: %w", err)
	}
	var drop, create []string
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.name] = true
		h, ok := have[w.name]
		if ok && h.def == w.def && h.table == w.table {
			continue
		}
		if ok {
			drop = append(drop, d.dropTrigger(h.name, h.table))
		}
		create = append(create, w.create...)
	}
	for _, name := range sortedKeys(have) {
		if !wanted[name] {
			drop = append(drop, d.dropTrigger(name, have[name].table))
		}
	}
	return append(drop, create...), nil
}

// querier reads rows on a database or in a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readTriggers reads (name, table, definition) rows into the history triggers among them, by
// name.
func readTriggers(ctx context.Context, q querier, query string) (map[string]trigger, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]trigger{}
	for rows.Next() {
		var t trigger
		if err := rows.Scan(&t.name, &t.table, &t.def); err != nil {
			return nil, err
		}
		if isHistoryTrigger(t.name) {
			out[t.name] = t
		}
	}
	return out, rows.Err()
}

// remakeHistory makes the history triggers want in tx, where the warehouse's differ.
func remakeHistory(ctx context.Context, tx *sql.Tx, d dialect, want []trigger) error {
	stmts, err := staleHistory(ctx, tx, d, want)
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("history triggers: %s: %w", firstWords(q), err)
		}
	}
	return nil
}

// isHistoryTrigger reports whether a trigger's name is a history trigger's: <table>_history_<op>
// for a declared table.
func isHistoryTrigger(name string) bool {
	i := strings.LastIndex(name, "_history_")
	return i > 0 && tableOf(name[:i]) != nil && slices.Contains([]string{"ins", "upd", "del"}, name[i+len("_history_"):])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
