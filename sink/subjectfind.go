package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jmoiron/sqlx"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Finding the person of a subject access: a data protection officer is given a name or an
// email, not a source id. FindEmployees looks for them among the employees the warehouse holds,
// in their current record and every earlier version of it (a request may name the person by a
// name or an address they had when they asked).

// EmployeeQuery is what a person is looked for by: an email (case ignored, surrounding spaces
// too) or a name (every word of it a word of the person's first or last name, case and accents
// ignored: "zoe bronte" finds Zoë Brontë, "Brontë" every Brontë). One of them.
type EmployeeQuery struct {
	Email, Name string
}

// EmployeeMatch is an employee a query found, as their current record gives them: enough for
// whoever chooses between several to tell them apart.
type EmployeeMatch struct {
	ID                    int64
	FirstName, LastName   string
	Department, Status    string
	JoinDate, LeavingDate string // YYYY-MM-DD, "" when not known
}

// Name is the match's first and last names, or "employee ID" when neither is held (erased).
func (m EmployeeMatch) Name() string {
	if n := strings.TrimSpace(m.FirstName + " " + m.LastName); n != "" {
		return n
	}
	return fmt.Sprintf("employee %d", m.ID)
}

// FindEmployees lists the employees q finds, by id, in one snapshot. An empty query finds no one.
func (s *Store) FindEmployees(ctx context.Context, q EmployeeQuery) ([]EmployeeMatch, error) {
	email := normalEmail(q.Email)
	words := nameWords(q.Name)
	if email == "" && len(words) == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTxx(ctx, s.d.snapshot())
	if err != nil {
		return nil, fmt.Errorf("find employees: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// Every name and email each person has had: their row's and its versions'.
	// The members the source sent beyond the typed ones (extra) are read too: a leaver writes
	// from a personal address (personal_email, say), not the work one they no longer have.
	rows, err := tx.QueryContext(ctx, `SELECT id, coalesce(first_name, ''), coalesce(last_name, ''), coalesce(email, ''), coalesce(CAST(extra AS TEXT), '') FROM employees
UNION SELECT id, coalesce(first_name, ''), coalesce(last_name, ''), coalesce(email, ''), coalesce(CAST(extra AS TEXT), '') FROM employees_history`)
	if err != nil {
		return nil, fmt.Errorf("find employees: %w", err)
	}
	found := map[int64]bool{}
	for rows.Next() {
		var id int64
		var first, last, mail, extra string
		if err := rows.Scan(&id, &first, &last, &mail, &extra); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find employees: %w", err)
		}
		if (email != "" && (normalEmail(mail) == email || slices.Contains(extraEmails(extra), email))) ||
			(len(words) > 0 && namesMatch(words, first+" "+last)) {
			found[id] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find employees: %w", err)
	}
	ids := slices.Sorted(func(yield func(int64) bool) {
		for id := range found {
			if !yield(id) {
				return
			}
		}
	})
	// What tells the matches apart, from their current rows, a bounded batch of ids a query.
	d := s.d
	byID := make(map[int64]EmployeeMatch, len(ids))
	for batch := range slices.Chunk(ids, 500) {
		query, args, err := sqlx.In(`SELECT e.id, coalesce(e.first_name, ''), coalesce(e.last_name, ''), coalesce(dep.name, ''), coalesce(e.status, ''),
  coalesce(`+d.read(KindDate, "e.company_join_date")+`, ''), coalesce(`+d.read(KindDate, "e.leaving_date")+`, '')
FROM employees e LEFT JOIN departments dep ON dep.id = e.department_id WHERE e.id IN (?)`, batch)
		if err != nil {
			return nil, fmt.Errorf("find employees: %w", err)
		}
		rows, err := tx.QueryContext(ctx, tx.Rebind(query), args...)
		if err != nil {
			return nil, fmt.Errorf("find employees: %w", err)
		}
		for rows.Next() {
			var m EmployeeMatch
			if err := rows.Scan(&m.ID, &m.FirstName, &m.LastName, &m.Department, &m.Status, &m.JoinDate, &m.LeavingDate); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find employees: %w", err)
			}
			byID[m.ID] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find employees: %w", err)
		}
	}
	out := make([]EmployeeMatch, 0, len(ids))
	for _, id := range ids {
		m, ok := byID[id]
		if !ok {
			m = EmployeeMatch{ID: id} // only in the history (a row removed since): known by its id
		}
		out = append(out, m)
	}
	return out, nil
}

// extraEmails are the addresses among the members the source sent beyond the typed ones (a
// JSON object): the text of each member whose name holds "email" in any case (personal_email,
// workEmail…), normalized (normalEmail). Nothing when extra is not an object.
func extraEmails(extra string) []string {
	if extra == "" {
		return nil
	}
	var members map[string]any
	if json.Unmarshal([]byte(extra), &members) != nil {
		return nil
	}
	var out []string
	for name, v := range members {
		if text, ok := v.(string); ok && strings.Contains(strings.ToLower(name), "email") {
			if e := normalEmail(text); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// foldName is s without case or accents: "Zoë" and "ZOE" are "zoe".
func foldName(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.ToLower(out)
}

// nameWords are the words of a name, folded (foldName); hyphens and apostrophes part words
// no more than spaces do ("Anne-Marie" is anne and marie).
func nameWords(s string) []string {
	return strings.FieldsFunc(foldName(s), func(r rune) bool {
		return unicode.IsSpace(r) || r == '-' || r == '\'' || r == '’' || r == ',' || r == '.'
	})
}

// namesMatch reports whether every word of words is a word of name.
func namesMatch(words []string, name string) bool {
	have := nameWords(name)
	for _, w := range words {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
