package sink

import (
	"context"
	"fmt"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// statusLeaver is the status the source gives an employee who has left (UPSTREAM.md: leavers stay
// listed as Ex-employee).
const statusLeaver = "Ex-employee"

// Where a leaver's leaving date comes from (Leaver.From), the first that knows it.
const (
	// LeftOnLeavingDate: the source sends it (employees.leaving_date), and it has passed.
	LeftOnLeavingDate = "leaving_date"
	// LeftOnStatus: the sync that first saw the employee as Ex-employee (their history knows
	// when: the version that stopped being current).
	LeftOnStatus = "status"
	// LeftOnUnlisted: the sync after which the source no longer listed them (deleted_at).
	LeftOnUnlisted = "unlisted"
)

// A Leaver is an employee who has left, and since when.
type Leaver struct {
	EmployeeID int64
	// Left is the leaving date (UTC), From where it comes from.
	Left time.Time
	From string
}

// Leavers are the employees who have left by now: those the source gives a leaving date that
// has passed (leaving_date), those it lists as Ex-employee (since the first sync that saw them
// so: when the last version of them that was not stopped being current, or, for one never seen
// otherwise, the first sync that saw them), and those it no longer lists (since deleted_at). A
// sent leaving date wins, but not over a current employee still listed (a returner, or a date
// left behind).
func (s *Store) Leavers(ctx context.Context, now time.Time) ([]Leaver, error) {
	d := s.d
	q := s.db.Rebind(`SELECT e.id,
  coalesce(` + d.read(KindDate, "e.leaving_date") + `, ''),
  coalesce(e.status, ''),
  coalesce(` + d.read(KindTimestamp, "e.deleted_at") + `, ''),
  coalesce((SELECT ` + d.read(KindTimestamp, "max(h.valid_to)") + ` FROM employees_history h
    WHERE h.id = e.id AND (h.status IS NULL OR h.status <> ?)), ''),
  coalesce((SELECT ` + d.read(KindTimestamp, "min(h.valid_from)") + ` FROM employees_history h WHERE h.id = e.id), '')
FROM employees e
WHERE e.listed AND (e.status = ? OR e.deleted_at IS NOT NULL OR e.leaving_date IS NOT NULL)
ORDER BY e.id`)
	rows, err := s.db.QueryContext(ctx, q, statusLeaver, statusLeaver)
	if err != nil {
		return nil, fmt.Errorf("leavers: %w", err)
	}
	defer rows.Close()
	today := now.UTC().Format(time.DateOnly)
	var out []Leaver
	for rows.Next() {
		var id int64
		var leaving, status, deleted, lastCurrent, firstSeen string
		if err := rows.Scan(&id, &leaving, &status, &deleted, &lastCurrent, &firstSeen); err != nil {
			return nil, fmt.Errorf("leavers: %w", err)
		}
		l := Leaver{EmployeeID: id}
		switch {
		case leaving != "" && leaving <= today && (status != statusCurrent || deleted != ""):
			l.Left, l.From = parseDate(leaving), LeftOnLeavingDate
		case status == statusLeaver && lastCurrent != "":
			l.Left, l.From = parseTimestamp(lastCurrent), LeftOnStatus
		case status == statusLeaver && firstSeen != "":
			l.Left, l.From = parseTimestamp(firstSeen), LeftOnStatus
		case deleted != "":
			l.Left, l.From = parseTimestamp(deleted), LeftOnUnlisted
		default:
			continue // a leaving date still to come
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("leavers: %w", err)
	}
	return out, nil
}

func parseDate(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

func parseTimestamp(s string) time.Time {
	t, _ := time.Parse(v1.TimestampLayout, s)
	return t
}
