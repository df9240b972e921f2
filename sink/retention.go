package sink

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// What retention (sync/retention) asks of the warehouse beyond the erasure engine: the
// sicknesses whose details are due, the onboarding ledger's old rows, and the record of its runs
// in the erasure log (docs/personal-data.md, "Retention").

// RetentionRunCause is the cause of the erasure_log entry every retention run writes, whatever
// it erased (its rows: what each rule erased), so that the last successful run is known
// (LastRetentionRun).
const RetentionRunCause = ErasureCauseRetention + "run"

// A SicknessRef is a sickness, and whose it is.
type SicknessRef struct{ ID, EmployeeID int64 }

// SicknessesEndedBefore are the sicknesses that ended before day (their end_date,
// else their start_date, is earlier), listed or not, whose health members are not already erased
// by an erasure in force (of the sickness, or of the person it is of).
func (s *Store) SicknessesEndedBefore(ctx context.Context, day time.Time) ([]SicknessRef, error) {
	set, err := loadErased(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("sicknesses ended: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, coalesce(employee_id, 0), coalesce(`+s.d.read(KindDate, "end_date")+`, `+
		s.d.read(KindDate, "start_date")+`, '') FROM sicknesses ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sicknesses ended: %w", err)
	}
	defer rows.Close()
	before := day.UTC().Format(time.DateOnly)
	var out []SicknessRef
	for rows.Next() {
		var id, employee int64
		var ended string
		if err := rows.Scan(&id, &employee, &ended); err != nil {
			return nil, fmt.Errorf("sicknesses ended: %w", err)
		}
		if ended == "" || ended >= before {
			continue
		}
		if set != nil && (slices.Contains(set.records["sicknesses"][id], v1.Health) || slices.Contains(set.people[employee], v1.Health)) {
			continue
		}
		out = append(out, SicknessRef{ID: id, EmployeeID: employee})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sicknesses ended: %w", err)
	}
	return out, nil
}

// onboardingErased is what retention takes out of an old onboarding row: its email (NOT NULL:
// blanked), the hash of the create sent and the source's reason for refusing it.
const onboardingErased = "email = '', request_hash = NULL, reason = NULL"

// onboardingDue selects the rows last changed before the cut that still hold something of
// onboardingErased; a row still being sent (sending) is left for the onboarding to finish.
const onboardingDue = "updated_at < ? AND status <> 'sending' AND (email <> '' OR request_hash IS NOT NULL OR reason IS NOT NULL)"

// EraseOnboardingRows erases the personal members of the onboarding ledger's rows last changed
// before cut (email, the create's hash, the refusal's reason; the file's name, hash, line, status
// and employee stay), in one transaction, logged with cause, then scrubbed; it returns how many
// rows it changed. dry counts them and changes nothing. A new hire's email erased here no longer
// stops the same email in a later file from being sent again: the HR system refuses a duplicate.
func (s *Store) EraseOnboardingRows(ctx context.Context, cut time.Time, cause string, dry bool) (int64, error) {
	at := cut.UTC().Format(v1.TimestampLayout)
	if dry {
		var n int64
		if err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT count(*) FROM onboarding_rows WHERE `+onboardingDue), at).Scan(&n); err != nil {
			return 0, fmt.Errorf("erase onboarding rows: %w", err)
		}
		return n, nil
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", err)
	}
	defer conn.Close()
	done, err := s.d.beginErase(ctx, conn)
	if err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", err)
	}
	defer done()
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.d.serializeWrites(ctx, tx); err != nil { // the log's next id (auditID)
		return 0, fmt.Errorf("erase onboarding rows: serialize writes: %w", busyErr(err))
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE onboarding_rows SET `+onboardingErased+` WHERE `+onboardingDue), at)
	if err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", busyErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	if err := logErasure(ctx, s.d, tx, now, "retention", cause, "", "onboarding_rows before "+at,
		classNames([]v1.Class{v1.Identifying, v1.FreeText}), map[string]int64{"onboarding_rows": n}); err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("erase onboarding rows: %w", busyErr(err))
	}
	if err := s.d.scrub(ctx, conn, []string{"onboarding_rows"}); err != nil {
		return n, fmt.Errorf("erase onboarding rows: %w: %w", ErrNotScrubbed, err)
	}
	return n, nil
}

// LogRetentionRun writes the erasure_log entry of a retention run that succeeded (cause
// RetentionRunCause, subject "run"): counts per rule and what, never a value. Every run writes
// one, even one that erased nothing, so that LastRetentionRun knows when retention last ran.
func (s *Store) LogRetentionRun(ctx context.Context, counts map[string]int64) error {
	if counts == nil {
		counts = map[string]int64{}
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("log the retention run: %w", busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.d.serializeWrites(ctx, tx); err != nil { // the log's next id (auditID)
		return fmt.Errorf("log the retention run: serialize writes: %w", busyErr(err))
	}
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	if err := logErasure(ctx, s.d, tx, now, "retention", RetentionRunCause, "", "run", "", counts); err != nil {
		return fmt.Errorf("log the retention run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("log the retention run: %w", busyErr(err))
	}
	return nil
}

// LastRetentionRun is when the last retention run that succeeded ended (its LogRetentionRun);
// ok is false when none has.
func (s *Store) LastRetentionRun(ctx context.Context) (at time.Time, ok bool, err error) {
	var last sql.NullString
	err = s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT `+s.d.read(KindTimestamp, "max(at)")+` FROM erasure_log WHERE action = 'retention' AND cause = ?`),
		RetentionRunCause).Scan(&last)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last retention run: %w", err)
	}
	if !last.Valid || last.String == "" {
		return time.Time{}, false, nil
	}
	return parseTimestamp(last.String), true, nil
}

// RetentionLog is one erasure_log entry, as the retention command and tests read them.
type RetentionLog struct {
	At, Action, Cause, Subject, Classes string
	Rows                                map[string]int64
}

// ErasureLog lists the erasure log, oldest first: counts, never values.
func (s *Store) ErasureLog(ctx context.Context) ([]RetentionLog, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+s.d.read(KindTimestamp, "at")+`, action, cause, subject, classes, rows FROM erasure_log ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("erasure log: %w", err)
	}
	defer rows.Close()
	var out []RetentionLog
	for rows.Next() {
		var l RetentionLog
		var counts string
		if err := rows.Scan(&l.At, &l.Action, &l.Cause, &l.Subject, &l.Classes, &counts); err != nil {
			return nil, fmt.Errorf("erasure log: %w", err)
		}
		if err := json.NewDecoder(strings.NewReader(counts)).Decode(&l.Rows); err != nil {
			return nil, fmt.Errorf("erasure log: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
