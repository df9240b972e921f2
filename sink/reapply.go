package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// ReapplyResult is what ReapplyJournal did: the erasures of the journal it recorded and erased
// again, the lifts it made again, and the rows it changed per table.
type ReapplyResult struct {
	Erased, Lifted int
	Rows           map[string]int64
}

// JournalBehind is how many erasures and lifts of the erasure journal the warehouse lacks
// (a backup taken before them was restored): what ReapplyJournal would do. Both are 0 without
// a journal.
func (s *Store) JournalBehind(ctx context.Context) (erasures, lifts int, err error) {
	missing, lift, err := s.journalMissing(ctx)
	return len(missing), len(lift), err
}

// journalMissing are the journal's erasures the warehouse does not hold, in the journal's
// order, and the lifts it has not made (of erasures it holds, or of missing ones).
func (s *Store) journalMissing(ctx context.Context) (missing []journalEntry, lifts []journalEntry, err error) {
	path := s.JournalPath()
	if path == "" {
		return nil, nil, nil
	}
	entries, _, err := readJournal(path, s.opts.Account)
	if err != nil {
		return nil, nil, fmt.Errorf("read the erasure journal: %w", err)
	}
	if len(entries) == 0 {
		return nil, nil, nil
	}
	list, err := s.Erasures(ctx)
	if err != nil {
		return nil, nil, err
	}
	held := map[string]Erasure{}
	for _, e := range list {
		held[erasureKey(e)] = e
	}
	seen := map[string]bool{}
	for _, e := range entries {
		k := e.key()
		w, ok := held[k]
		switch {
		case e.Op == "erase" && !ok && !seen[k]:
			seen[k] = true
			missing = append(missing, e)
		case e.Op == "lift" && (seen[k] || ok && w.LiftedAt == ""):
			lifts = append(lifts, e)
		}
	}
	return missing, lifts, nil
}

// ReapplyJournal brings the warehouse up to date with its erasure journal: every erasure the
// journal holds and the warehouse does not (it was restored from a backup taken before them) is
// recorded again, as it was (its classes, cause, reason and time), and erased as an erase does,
// everywhere; then every lift the warehouse has not made is made. It is one transaction, logged
// in erasure_log like the erasures and lifts themselves (their reason prefixed "re-applied from
// the erasure journal"), then the tables changed are scrubbed (ErrNotScrubbed if that fails).
//
// The fingerprints of a person's emails are taken again from what the warehouse holds of them,
// and those the journal kept are kept too when the warehouse's fingerprint secret is the one
// they were keyed with (a backup taken after the first erasure that made it).
func (s *Store) ReapplyJournal(ctx context.Context) (ReapplyResult, error) {
	res := ReapplyResult{Rows: map[string]int64{}}
	missing, lifts, err := s.journalMissing(ctx)
	if err != nil || len(missing) == 0 && len(lifts) == 0 {
		return res, err
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return res, fmt.Errorf("re-apply the erasure journal: %w", err)
	}
	defer conn.Close()
	done, err := s.d.beginErase(ctx, conn)
	if err != nil {
		return res, fmt.Errorf("re-apply the erasure journal: %w", err)
	}
	defer done()
	if err := s.reapplyTx(ctx, conn, missing, lifts, &res); err != nil {
		return ReapplyResult{Rows: map[string]int64{}}, fmt.Errorf("re-apply the erasure journal: %w", busyErr(err))
	}
	var tables []string
	for t := range res.Rows {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	if err := s.d.scrub(ctx, conn, tables); err != nil {
		return res, fmt.Errorf("re-apply the erasure journal: %w: %w", ErrNotScrubbed, err)
	}
	s.scrubStatistics(ctx, conn)
	return res, nil
}

// reapplied prefixes the reason of a re-applied erasure's or lift's log entry.
const reapplied = "re-applied from the erasure journal"

func (s *Store) reapplyTx(ctx context.Context, conn *sqlx.Conn, missing, lifts []journalEntry, res *ReapplyResult) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	tx, sicknessDays, err := s.beginEraseTx(ctx, conn)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// Recorded first, all of them: each erase below then takes every copy of a person erased
	// by any of them, as the erased set at the time did.
	ids := make([]int64, len(missing))
	classes := make([][]v1.Class, len(missing))
	for i, e := range missing {
		if classes[i], err = parseClasses(e.Classes); err != nil {
			return fmt.Errorf("journal erasure of %s %d: %w", e.Collection, e.SubjectID, err)
		}
		if e.Kind == ErasureRecord && tableOf(e.Collection) == nil {
			return fmt.Errorf("journal erasure of %s %d: unknown collection", e.Collection, e.SubjectID)
		}
		err := tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO erasures (id, kind, collection, subject_id, classes, cause, reason, erased_at) `+
			s.d.givenID()+` VALUES (`+auditID("erasures")+`, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			e.Kind, e.Collection, e.SubjectID, e.Classes, e.Cause, e.Reason, e.ErasedAt).Scan(&ids[i])
		if err != nil {
			return fmt.Errorf("record the erasure: %w", err)
		}
	}
	set, err := loadErased(ctx, tx)
	if err != nil {
		return err
	}
	var secret []byte
	for i, e := range missing {
		rows := map[string]int64{"erasures": 1}
		x := &eraser{d: s.d, tx: tx, set: set, decls: s.opts.Declarations, rows: rows, sicknessDays: sicknessDays}
		if e.Kind == ErasureEmployee {
			keep := e.Cause == ErasureCauseRequest // as eraseTx: only a request holds the person back from onboarding
			if err := x.employee(ctx, ids[i], e.SubjectID, classes[i], keep); err != nil {
				return err
			}
			if keep && len(e.Fingerprints) > 0 && slices.Contains(classes[i], v1.Identifying) {
				if secret == nil {
					if secret, err = erasureSecret(ctx, tx, true); err != nil {
						return err
					}
				}
				if e.SecretID == secretID(secret) {
					for _, k := range e.Fingerprints {
						if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO erased_identities (erasure_id, email_key) VALUES (?, ?)
ON CONFLICT (erasure_id, email_key) DO NOTHING`), ids[i], k); err != nil {
							return fmt.Errorf("keep the erased identities: %w", err)
						}
					}
				}
			}
		} else {
			if err := x.records(ctx, tableOf(e.Collection), []int64{e.SubjectID}, classes[i]); err != nil {
				return err
			}
			if e.Collection == v1.Sicknesses.Name {
				if err := x.deleteSicknessDays(ctx, "id = ?", []any{e.SubjectID}); err != nil {
					return err
				}
			}
		}
		action := "erase"
		if e.Cause != ErasureCauseRequest {
			action = "retention"
		}
		subject := Erasure{Kind: e.Kind, Collection: e.Collection, SubjectID: e.SubjectID}.Subject()
		if err := logErasure(ctx, s.d, tx, now, action, e.Cause, withReason(reapplied, e.Reason), subject, e.Classes, rows); err != nil {
			return err
		}
		for t, n := range rows {
			res.Rows[t] += n
		}
		res.Erased++
	}
	for _, l := range lifts {
		var id int64
		err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT id FROM erasures WHERE kind = ? AND collection = ? AND subject_id = ? AND classes = ?
AND cause = ? AND erased_at = ? AND lifted_at IS NULL ORDER BY id LIMIT 1`),
			l.Kind, l.Collection, l.SubjectID, l.Classes, l.Cause, l.ErasedAt).Scan(&id)
		if err != nil {
			return fmt.Errorf("lift %s %d again: %w", l.Collection, l.SubjectID, err)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE erasures SET lifted_at = ?, lift_reason = ? WHERE id = ?`), l.LiftedAt, l.LiftReason, id); err != nil {
			return fmt.Errorf("lift erasure %d again: %w", id, err)
		}
		rows := map[string]int64{"erasures": 1}
		r, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM erased_identities WHERE erasure_id = ?`), id)
		if err != nil {
			return fmt.Errorf("lift erasure %d again: %w", id, err)
		}
		if n, err := r.RowsAffected(); err == nil && n > 0 {
			rows["erased_identities"] = n
		}
		subject := Erasure{Kind: l.Kind, Collection: l.Collection, SubjectID: l.SubjectID}.Subject()
		if err := logErasure(ctx, s.d, tx, now, "lift", l.Cause, withReason(reapplied, l.LiftReason), subject, l.Classes, rows); err != nil {
			return err
		}
		res.Lifted++
	}
	return tx.Commit()
}

// withReason is prefix, then the reason given when there is one.
func withReason(prefix, reason string) string {
	if strings.TrimSpace(reason) == "" {
		return prefix
	}
	return prefix + ": " + reason
}

// JournalBehindError is CheckJournal's error: the warehouse lacks erasures or lifts of its
// erasure journal, so it would serve and sync people erased since the backup it was restored
// from.
type JournalBehindError struct {
	Erasures, Lifts int
	Journal         string
}

func (e *JournalBehindError) Error() string {
	return fmt.Sprintf("the warehouse lacks %d erasures and %d lifts of its erasure journal %s (a backup restored without them): "+
		"run hrsync erase --reapply before it is served or synced", e.Erasures, e.Lifts, e.Journal)
}

// CheckJournal refuses (*JournalBehindError) a warehouse that lacks erasures or lifts of its
// erasure journal: the worker and serve ask it of each warehouse they open, and neither syncs
// nor serves one that would bring erased people back. Re-applying is left to hrsync erase
// --reapply (or hrsync restore, which does it before the restored data is in place): it
// rewrites the warehouse's files, which a replica opening it for a request should not start.
func (s *Store) CheckJournal(ctx context.Context) error {
	n, l, err := s.JournalBehind(ctx)
	if err != nil {
		return err
	}
	if n+l > 0 {
		return &JournalBehindError{Erasures: n, Lifts: l, Journal: s.JournalPath()}
	}
	return nil
}
