package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hrsync/hrsync/schema"
)

// ErrNoWarehouse is wrapped by OpenExisting's error when there is no warehouse at the URL: no
// SQLite file (or an empty one), or a Postgres schema never migrated.
var ErrNoWarehouse = errors.New("no warehouse")

// OpenExisting is Open for a command that acts on a warehouse already there (erase,
// subject-access, retention): where there is none it makes none, and its error wraps
// ErrNoWarehouse. Open makes a SQLite file that is missing, and an erasure recorded in a
// warehouse made for it would hold nobody's data and be lost from the real one.
func OpenExisting(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	if _, err := Classify(rawURL); err != nil {
		return nil, err
	}
	if err := backendOf(rawURL).existing(rawURL); err != nil {
		return nil, err
	}
	s, err := Open(ctx, rawURL, opts)
	var behind *schema.BehindError
	if errors.As(err, &behind) && behind.Current == 0 {
		return nil, fmt.Errorf("%w: %w", ErrNoWarehouse, err)
	}
	return s, err
}

// HoldsEmployee reports whether any row of the warehouse holds or names the employee id: what a
// subject access would find (their employees row or a version of it, their records, a record of
// another naming them, an onboarding row or a kept answer of a create with their id). An erasure
// of an id it does not hold erases nothing now; it only holds for when a sync brings them.
func (s *Store) HoldsEmployee(ctx context.Context, id int64) (bool, error) {
	tx, err := s.db.BeginTxx(ctx, s.d.snapshot())
	if err != nil {
		return false, fmt.Errorf("look for employee %d: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, src := range subjectSources {
		var one int
		q := "SELECT 1 FROM " + src.table + " WHERE " + src.where + " LIMIT 1"
		err := tx.QueryRowContext(ctx, tx.Rebind(q), repeat(id, strings.Count(src.where, "?"))...).Scan(&one)
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, sql.ErrNoRows):
			return false, fmt.Errorf("look for employee %d in %s: %w", id, src.table, err)
		}
	}
	return false, nil
}
