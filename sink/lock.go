package sink

import (
	"context"
	"fmt"

	"github.com/hrsync/hrsync/schema"
)

// TryLock takes a named lock shared by every process using this warehouse, without waiting: ok
// is false when another process holds it. On Postgres it is a session advisory lock on a
// connection held until release (a process that dies releases it with its session); on SQLite,
// an flock on the file beside the database (released by the kernel when the process dies).
func (s *Store) TryLock(ctx context.Context, name string) (release func(), ok bool, err error) {
	if s.dialect == schema.SQLite {
		return flock(s.location + "." + name + ".lock")
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	// One key per schema and name: replicas of one warehouse share it, other warehouses on the
	// same server do not.
	const key = `hashtextextended('hrsync:' || current_schema() || ':' || $1, 0)`
	if err := conn.QueryRowxContext(ctx, `SELECT pg_try_advisory_lock(`+key+`)`, name).Scan(&ok); err != nil {
		_ = conn.Close()
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		_ = conn.Close()
		return nil, false, nil
	}
	return func() {
		// Unlock on a context of its own: the run's may be canceled, the lock must still go.
		if _, err := conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(`+key+`)`, name); err != nil {
			s.log.Warn("release lock", "lock", name, "err", err)
		}
		_ = conn.Close()
	}, true, nil
}
