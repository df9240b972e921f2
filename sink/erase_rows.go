package sink

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// Where an erase reaches (erase.go tells the whole story of erasure): every table, version,
// JSON member, kept answer and onboarding row that holds what is erased, one eraser a transaction.

// eraser erases rows in one transaction, counting the rows it changes per table.
type eraser struct {
	d   dialect
	tx  *sqlx.Tx
	set *erasedSet
	// decls are what the JSON columns are erased by (Options.Declarations).
	decls v1.Declarations
	rows  map[string]int64
	// sicknessDays is whether the warehouse has model_sickness_working_days (schema 0029).
	sicknessDays bool
}

// sicknessDays deletes the rows of model_sickness_working_days where cond holds: what a
// refresh worked out of the sicknesses erased (their days, whether the Bradford factor counted
// them). The erasure's writes leave the table stale, and model_bradford reads none of it until
// the next refresh writes it again from what is left.
func (x *eraser) deleteSicknessDays(ctx context.Context, cond string, args []any) error {
	if !x.sicknessDays {
		return nil
	}
	res, err := x.tx.ExecContext(ctx, x.tx.Rebind(`DELETE FROM `+sicknessDaysTable+` WHERE `+cond), args...)
	if err != nil {
		return fmt.Errorf("erase %s: %w", sicknessDaysTable, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		x.rows[sicknessDaysTable] += n
	}
	return nil
}

// employee erases the person id (the erasure erasureID): their row, their events, every copy
// of them on other records, the answers to their creates and their onboarding rows; when their
// identifying data goes and fingerprint is set (an erasure they asked for), the fingerprints of
// their emails are kept first (erased.go), so that onboarding does not create them again.
func (x *eraser) employee(ctx context.Context, erasureID, id int64, classes []v1.Class, fingerprint bool) error {
	emails, err := x.emails(ctx, id)
	if err != nil {
		return err
	}
	if fingerprint && slices.Contains(classes, v1.Identifying) {
		if err := x.fingerprint(ctx, erasureID, id, emails); err != nil {
			return err
		}
	}
	// Their own row and its versions, then their events'.
	if err := x.rowsWhere(ctx, tableOf(string(Employees)), "id = ?", []any{id}, classes); err != nil {
		return err
	}
	for _, t := range tables {
		for _, r := range t.refs {
			if r.field == "employee" && r.target == string(Employees) {
				if err := x.rowsWhere(ctx, t, r.column+" = ?", []any{id}, classes); err != nil {
					return err
				}
			}
		}
	}
	// Their copies on other records: the nested objects naming them, every version.
	for _, t := range tables {
		var conds []string
		var args []any
		for _, r := range t.refs {
			if r.target == string(Employees) && r.field != "employee" {
				conds = append(conds, r.column+" = ?")
				args = append(args, id)
			}
		}
		if len(conds) > 0 {
			if err := x.rowsWhere(ctx, t, strings.Join(conds, " OR "), args, nil); err != nil {
				return err
			}
		}
	}
	if err := x.deleteSicknessDays(ctx, "employee_id = ?", []any{id}); err != nil {
		return err
	}
	if err := x.idempotency(ctx, id, classes); err != nil {
		return err
	}
	if err := x.events(ctx, id, classes); err != nil {
		return err
	}
	return x.onboarding(ctx, id, emails, classes)
}

// events erases the person from the joiner, mover and leaver events (docs/events.md) when their
// identifying or employment data goes: their events and the log of their deliveries to
// webhooks are deleted, whatever their state (what a
// mover's says of them, their job title and moves, is employment data, and every event of
// theirs says who joined or left), and what the events last told of them (event_state) is
// taken again from their row as the erasure leaves it, so that the next load finds nothing of
// them changed and tells nothing. Others' events name them by id only (a line manager), as
// employees.line_manager_id does.
func (x *eraser) events(ctx context.Context, id int64, classes []v1.Class) error {
	if !slices.Contains(classes, v1.Identifying) && !slices.Contains(classes, v1.Employment) {
		return nil
	}
	n, err := exec(ctx, x.tx, x.tx.Rebind(`DELETE FROM event_deliveries WHERE employee_id = ?`), id)
	if err != nil {
		return fmt.Errorf("erase event deliveries: %w", err)
	}
	x.rows["event_deliveries"] += n
	if n, err = exec(ctx, x.tx, x.tx.Rebind(`DELETE FROM events WHERE employee_id = ?`), id); err != nil {
		return fmt.Errorf("erase events: %w", err)
	}
	x.rows["events"] += n
	if n, err = resnapshotState(ctx, x.tx, x.d, id); err != nil {
		return fmt.Errorf("erase events: %w", err)
	}
	x.rows["event_state"] += n
	return nil
}

// records erases the records ids of t.
func (x *eraser) records(ctx context.Context, t *table, ids []int64, classes []v1.Class) error {
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		if err := x.rowsWhere(ctx, t, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(batch)), ", ")+")", args, classes); err != nil {
			return err
		}
	}
	return nil
}

// emails are the email addresses the person's row has ever had, in lower case, as the
// onboarding ledger keeps them.
func (x *eraser) emails(ctx context.Context, id int64) ([]string, error) {
	var out []string
	err := x.tx.SelectContext(ctx, &out, x.tx.Rebind(`SELECT DISTINCT lower(email) FROM employees WHERE id = ? AND email IS NOT NULL
UNION SELECT DISTINCT lower(email) FROM employees_history WHERE id = ? AND email IS NOT NULL`), id, id)
	if err != nil {
		return nil, fmt.Errorf("read the person's emails: %w", err)
	}
	return out, nil
}

// rowsWhere erases the classes own of the rows of t, and of every version in its history, where
// cond holds, and the people erased (x.set) from the nested objects of each: a column of one of
// own's classes is nulled; extra, nested and sent are erased member by member (x.decls.EraseJSON), as
// a load erases what it stages, so the next sync finds them unchanged. The current rows go
// first: their history triggers write the erased version, which the history's erasure then
// finds already erased.
func (x *eraser) rowsWhere(ctx context.Context, t *table, cond string, args []any, own []v1.Class) error {
	names := []string{t.name}
	if t.history {
		names = append(names, t.name+"_history")
	}
	for _, name := range names {
		n, err := x.table(ctx, t, name, cond, args, own)
		if err != nil {
			return fmt.Errorf("erase %s: %w", name, err)
		}
		if n > 0 {
			x.rows[name] += n
		}
	}
	return nil
}

// jsonColumns are the JSON columns erased member by member; the others are nulled by class.
var jsonColumns = []string{"extra", "nested", "sent"}

// table erases the rows of table name (t's or its history's), returning how many changed.
func (x *eraser) table(ctx context.Context, t *table, name, cond string, args []any, own []v1.Class) (int64, error) {
	var nulls, jsons []string
	for _, c := range t.cols {
		switch {
		case slices.Contains(jsonColumns, c.name):
			jsons = append(jsons, c.name)
		case c.name != "id" && slices.Contains(own, c.class):
			nulls = append(nulls, c.name)
		}
	}
	history := name != t.name
	sel := []string{"id", "''", "0"}
	if history {
		sel[1] = "CAST(valid_from AS text)" // a version's key, as the same session reads it again
	}
	if len(nulls) > 0 {
		sel[2] = "CASE WHEN " + strings.Join(nulls, " IS NULL AND ") + " IS NULL THEN 0 ELSE 1 END"
	}
	for _, j := range jsons {
		sel = append(sel, x.d.read(KindJSON, j))
	}
	type row struct {
		id    int64
		from  string
		set   bool
		jsons []sql.NullString
	}
	rs, err := x.tx.QueryContext(ctx, x.tx.Rebind(`SELECT `+strings.Join(sel, ", ")+` FROM `+name+` WHERE `+cond), args...)
	if err != nil {
		return 0, err
	}
	var found []row
	for rs.Next() {
		r := row{jsons: make([]sql.NullString, len(jsons))}
		dest := []any{&r.id, &r.from, &r.set}
		for i := range r.jsons {
			dest = append(dest, &r.jsons[i])
		}
		if err := rs.Scan(dest...); err != nil {
			rs.Close()
			return 0, err
		}
		found = append(found, r)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return 0, err
	}
	nested := x.set.nested(t.name)
	var changed int64
	for _, r := range found {
		var set []string
		var vals []any
		if r.set {
			for _, c := range nulls {
				set = append(set, c+" = NULL")
			}
		}
		for i, j := range jsons {
			if !r.jsons[i].Valid {
				continue
			}
			old := r.jsons[i].String
			erased, err := x.decls.EraseJSON(t.name, []byte(old), own, nested)
			if err != nil {
				// Not a JSON object (edited by hand): nothing in it can be told kept, so none of
				// it is.
				set = append(set, j+" = NULL")
				continue
			}
			switch {
			case string(erased) == "{}" && j != "sent":
				set = append(set, j+" = NULL") // as a load stages none
			case string(erased) != old:
				set = append(set, j+" = ?")
				vals = append(vals, string(erased))
			}
		}
		if len(set) == 0 {
			continue
		}
		where := " WHERE id = ?"
		vals = append(vals, r.id)
		if history {
			where += " AND CAST(valid_from AS text) = ?"
			vals = append(vals, r.from)
		}
		if _, err := x.tx.ExecContext(ctx, x.tx.Rebind(`UPDATE `+name+` SET `+strings.Join(set, ", ")+where), vals...); err != nil {
			return changed, err
		}
		changed++
	}
	return changed, nil
}

// idempotency erases the person from the answers kept for their creates (idempotency_keys.body,
// an envelope {"employees":[…]}): what a retry is given back loses the same members. When their
// identifying data goes, so does the request's hash: an unsalted SHA-256 of their name, email,
// job title and join date, which would confirm a guess of who they were offline. It is replaced
// with v1.ErasedRequestHash, which no request hashes to, rather than keyed with a secret: a
// retry of a create of an erased person is not one to be answered with the person again, and is
// told so (source/server). The rest (the status, the address, the id) names no one.
func (x *eraser) idempotency(ctx context.Context, id int64, classes []v1.Class) error {
	type key struct {
		client, idem, hash string
		body               []byte
	}
	var found []key
	rows, err := x.tx.QueryContext(ctx, x.tx.Rebind(`SELECT client, idem_key, request_hash, body FROM idempotency_keys WHERE employee_id = ?`), id)
	if err != nil {
		return fmt.Errorf("erase idempotency_keys: %w", err)
	}
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.client, &k.idem, &k.hash, &k.body); err != nil {
			rows.Close()
			return fmt.Errorf("erase idempotency_keys: %w", err)
		}
		found = append(found, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("erase idempotency_keys: %w", err)
	}
	identifying := slices.Contains(classes, v1.Identifying)
	for _, k := range found {
		body, hash := k.body, k.hash
		if body != nil {
			body = eraseAnswer(x.decls, k.body, id, classes, x.set.nested(string(Employees)))
		}
		if identifying {
			hash = v1.ErasedRequestHash
		}
		if string(body) == string(k.body) && hash == k.hash {
			continue
		}
		if _, err := x.tx.ExecContext(ctx, x.tx.Rebind(`UPDATE idempotency_keys SET body = ?, request_hash = ? WHERE client = ? AND idem_key = ?`), body, hash, k.client, k.idem); err != nil {
			return fmt.Errorf("erase idempotency_keys: %w", err)
		}
		x.rows["idempotency_keys"]++
	}
	return nil
}

// eraseAnswer is a create's answer with the classes of the employee id erased: an envelope of
// employees, each erased; an answer that is not one is replaced with the envelope of the bare id.
func eraseAnswer(decls v1.Declarations, body []byte, id int64, classes []v1.Class, nested func(string, int64) []v1.Class) []byte {
	out, err := eraseEnvelope(decls, body, classes, nested)
	if err != nil {
		return append(strconv.AppendInt([]byte(`{"employees":[{"id":`), id, 10), "}]}\n"...)
	}
	return append(out, '\n') // as serve writes an answer
}

// eraseEnvelope is an answer's envelope of employees ({"employees":[…]}, as serve kept it) with
// classes erased from each (decls.EraseJSON); an error when it is not one.
func eraseEnvelope(decls v1.Declarations, body []byte, classes []v1.Class, nested func(string, int64) []v1.Class) ([]byte, error) {
	items, err := v1.Envelope(string(Employees), body)
	if err != nil {
		return nil, err
	}
	out := []byte(`{"employees":[`)
	for i, item := range items {
		erased, err := decls.EraseJSON(string(Employees), item, classes, nested)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, erased...)
	}
	return append(out, "]}"...), nil
}

// onboarding erases the person from the onboarding ledger (the rows that created them, or sent
// their email): the email (NOT NULL: blanked) and the hash of the create sent when identifying
// data goes; the source's reason for refusing a row when free text does. The file's name stays:
// it is the file's, shared by every row of it.
func (x *eraser) onboarding(ctx context.Context, id int64, emails []string, classes []v1.Class) error {
	var set, changed []string
	if slices.Contains(classes, v1.Identifying) {
		set = append(set, "email = ''", "request_hash = NULL")
		changed = append(changed, "email <> ''", "request_hash IS NOT NULL")
	}
	if slices.Contains(classes, v1.FreeText) {
		set = append(set, "reason = NULL")
		changed = append(changed, "reason IS NOT NULL")
	}
	if len(set) == 0 {
		return nil
	}
	// A row that names an employee is theirs by that id alone: an address the person once had
	// may since be another's (recycled), whose rows are not theirs. A row that names none (sent
	// without an answer, refused) is theirs by email.
	where := "employee_id = ?"
	args := []any{id}
	if len(emails) > 0 {
		where += " OR (employee_id IS NULL AND email IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(emails)), ", ") + "))"
		for _, e := range emails {
			args = append(args, e)
		}
	}
	res, err := x.tx.ExecContext(ctx, x.tx.Rebind(`UPDATE onboarding_rows SET `+strings.Join(set, ", ")+
		` WHERE (`+where+`) AND (`+strings.Join(changed, " OR ")+`)`), args...)
	if err != nil {
		return fmt.Errorf("erase onboarding_rows: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		x.rows["onboarding_rows"] += n
	}
	return nil
}
