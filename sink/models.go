package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// RefreshedModels are the models the warehouse keeps as tables, each written from the view
// named like it with _derived (docs/models.md): a view would be too slow to read at every click
// (schema 0024). Each is as its view was when it was last refreshed (model_refreshes).
var RefreshedModels = []string{"model_absence_monthly"}

// ModelRefresh says what RefreshModels did.
type ModelRefresh struct {
	// Models are the models written, in RefreshedModels' order; none when every one was fresh
	// (or the warehouse has none: a schema before 0024).
	Models []string
	// Tables are the tables the models read, written with them when stale (or forced): the
	// sicknesses' working days model_bradford reads (schema 0029).
	Tables []string
	// TableRows counts the rows of Tables the refresh deleted or inserted: only the rows that
	// changed are written (a refresh after a day's sync writes a few of hundreds of thousands).
	TableRows int
	// Took is how long the refresh took, the check included.
	Took time.Duration
}

// RefreshModels writes each of RefreshedModels from its derived view, and the sicknesses'
// working days model_bradford reads (model_sickness_working_days, schema 0029, worked out here
// by writeSicknessDays), in one transaction, each when the warehouse has changed since it was
// last written (meta.version) or the day (UTC, the models' today) has; with force, whatever
// they say. Readers see the old rows until it commits.
// A sync refreshes them at the end of every run that loaded (sync/walk); `hrsync report` does
// before it reads them.
func (s *Store) RefreshModels(ctx context.Context, force bool) (ModelRefresh, error) {
	start := time.Now()
	var r ModelRefresh
	ok, err := s.d.tableExists(ctx, s.db.DB, "model_refreshes")
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("refresh models: %w", err)
		}
		return r, err
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return r, fmt.Errorf("refresh models: %w", busyErr(err))
	}
	defer tx.Rollback()
	// The row lock serializes refreshes of one warehouse: the second one reads the first's row
	// once it commits, and finds the model fresh (SQLite's writers are serialized by the write
	// lock its transactions take first).
	today, lock := s.d.today(), s.d.forUpdate()
	hasSicknessDays, err := s.d.tableExists(ctx, s.db.DB, sicknessDaysTable)
	if err != nil {
		return r, fmt.Errorf("refresh models: %w", err)
	}
	models := RefreshedModels
	if hasSicknessDays {
		models = append(slices.Clone(models), sicknessDaysTable)
	}
	for _, m := range models {
		var fresh bool
		err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT r.version = (SELECT version FROM meta) AND r.today = `+today+`
FROM model_refreshes r WHERE r.model = ?`+lock), m).Scan(&fresh)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("refresh %s: %w", m, err)
		}
		if fresh && !force {
			continue
		}
		began := time.Now()
		if m == sicknessDaysTable {
			n, err := s.writeSicknessDays(ctx, tx)
			if err != nil {
				return r, fmt.Errorf("refresh %s: %w", m, err)
			}
			r.TableRows += n
		} else {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+m); err != nil {
				return r, fmt.Errorf("refresh %s: %w", m, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+m+` SELECT * FROM `+m+`_derived`); err != nil {
				return r, fmt.Errorf("refresh %s: %w", m, err)
			}
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO model_refreshes (model, refreshed_at, version, today, took_ms)
SELECT ?, `+s.d.now()+`, version, `+today+`, ? FROM meta WHERE true
ON CONFLICT (model) DO UPDATE SET refreshed_at = excluded.refreshed_at, version = excluded.version,
    today = excluded.today, took_ms = excluded.took_ms`), m, time.Since(began).Milliseconds())
		if err != nil {
			return r, fmt.Errorf("refresh %s: %w", m, err)
		}
		if m == sicknessDaysTable {
			r.Tables = append(r.Tables, m)
		} else {
			r.Models = append(r.Models, m)
		}
	}
	if err := tx.Commit(); err != nil {
		return r, fmt.Errorf("refresh models: %w", busyErr(err))
	}
	r.Took = time.Since(start)
	if len(r.Models) > 0 || len(r.Tables) > 0 {
		s.log.Debug("models refreshed", "models", r.Models, "tables", r.Tables, "took", r.Took.Round(time.Millisecond))
	}
	return r, nil
}
