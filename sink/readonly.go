package sink

import (
	"context"
	"errors"
	"fmt"
)

// ErrReadOnly is wrapped by the errors of a warehouse that takes no writes (see ReadOnlyError).
var ErrReadOnly = errors.New("the warehouse takes no writes")

// ReadOnlyError says the warehouse takes no writes: a Postgres hot standby (a streaming replica,
// in recovery), or a server or role whose transactions are all read-only
// (default_transaction_read_only). Serve reads from it; anything that writes must be pointed at
// the primary. It wraps ErrReadOnly.
type ReadOnlyError struct {
	// Location is where the warehouse is, without credentials.
	Location string
	// Standby is true for a hot standby, false for read-only transactions on a primary.
	Standby bool
}

func (e *ReadOnlyError) Error() string {
	if e.Standby {
		return fmt.Sprintf("the warehouse at %s is a read-only replica (hot standby); point warehouse.url at the primary", e.Location)
	}
	return fmt.Sprintf("the warehouse at %s takes no writes (its transactions are read-only: default_transaction_read_only); point warehouse.url at a writable primary", e.Location)
}

func (e *ReadOnlyError) Unwrap() error { return ErrReadOnly }

// Writable reports whether the warehouse takes writes now: nil, or a *ReadOnlyError. It asks the
// server each time (one short statement), so a standby promoted to primary is writable at once.
// An embedded SQLite file is always writable here (a read-only file fails at open: it is
// migrated there).
func (s *Store) Writable(ctx context.Context) error {
	if s.pg == nil {
		return nil
	}
	var standby, readOnly bool
	err := s.db.QueryRowContext(ctx, `SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'`).Scan(&standby, &readOnly)
	if err != nil {
		return fmt.Errorf("warehouse %s: is it writable: %w", s.location, err)
	}
	if standby || readOnly {
		return &ReadOnlyError{Location: s.location, Standby: standby}
	}
	return nil
}

// ReadOnly reports whether the warehouse takes no writes now (Writable, as the serve handler
// asks it before a create).
func (s *Store) ReadOnly(ctx context.Context) (bool, error) {
	err := s.Writable(ctx)
	if errors.Is(err, ErrReadOnly) {
		return true, nil
	}
	return false, err
}
