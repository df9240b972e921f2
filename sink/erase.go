package sink

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// Erasure (UK/EU GDPR Art. 17; docs/personal-data.md, "Erasure on request"). Erasing a person
// takes the values of some erasable classes (v1.Class.Erasable) out of every place the
// warehouse holds them, in one transaction: their employees row and its every version; the
// records of their events (absences, sicknesses, leave requests, training courses, pay) and
// their versions; every copy of them on other records (a report's line manager, a leave
// request's approver: the nested objects, in nested and sent, of every version); the answers
// kept for creates (idempotency_keys) and the onboarding ledger. What stays are the facts of
// employment (ids, department, dates, days, statuses), so headcount and absence figures still
// add up. Erasing records (retention of a sickness's health details) takes the classes out of
// those records alone.
//
// Every erasure is sticky (table erasures): a sync erases the same classes of what it stages,
// before the merge (Load), so neither the merge nor the history triggers ever write an erased
// value again, until the erasure is lifted. Each erase, retention and lift is written to the
// audit ledger (erasure_log) with the rows it changed per table, never a value. After an erase
// commits, the dialect makes the old values unreadable in the database's files (dialect.scrub).

// ErasureCauseRequest is the cause of an erasure a person asked for; a retention rule's is
// ErasureCauseRetention + its name.
const (
	ErasureCauseRequest   = "request"
	ErasureCauseRetention = "retention: "
)

// The kinds of erasure: a person everywhere, or records of a collection.
const (
	ErasureEmployee = "employee"
	ErasureRecord   = "record"
)

// Erasure is one erasure: what stays erased across syncs until it is lifted.
type Erasure struct {
	ID int64
	// Kind is ErasureEmployee or ErasureRecord; Collection is the record's collection
	// (employees for a person) and SubjectID its id at the source.
	Kind       string
	Collection string
	SubjectID  int64
	Classes    []v1.Class
	Cause      string
	Reason     string
	// ErasedAt and LiftedAt are timestamps as the warehouse gives them (YYYY-MM-DDTHH:MM:SSZ);
	// LiftedAt is "" while the erasure holds.
	ErasedAt, LiftedAt string
	LiftReason         string
}

// Subject is whom or what the erasure is of: "employee 42", "sicknesses 7".
func (e Erasure) Subject() string {
	if e.Kind == ErasureEmployee {
		return "employee " + strconv.FormatInt(e.SubjectID, 10)
	}
	return e.Collection + " " + strconv.FormatInt(e.SubjectID, 10)
}

// ErasureResult is what an erase did: the erasures it recorded and the rows it changed per
// table (the tables where it changed none are left out).
type ErasureResult struct {
	IDs  []int64
	Rows map[string]int64
}

// ErrNotScrubbed is wrapped by an erase's error when the erasure committed but the database
// could not then make the old values unreadable in its files (dialect.scrub): the values are
// gone from every table, and the erase is kept; run the scrub again (Store.Scrub).
var ErrNotScrubbed = errors.New("erased, but the old values may still be readable in the database's files")

// ErrErasedDuringLoad is a merge's error when a person or record was erased after the load
// began: what it staged may hold what was erased, so it writes nothing. The next sync stages
// it erased.
var ErrErasedDuringLoad = errors.New("an erasure was made while the walk was staged: nothing written; sync again")

// EraseEmployee erases the classes (erasable ones; none given: every erasable class) of the
// employee id everywhere the warehouse holds them, records the erasure (sticky) and its log
// entry, and returns the rows it changed per table. The employee need not be in the warehouse:
// the erasure then holds for when a sync brings them. reason is kept and logged: it should not
// name the person.
func (s *Store) EraseEmployee(ctx context.Context, id int64, classes []v1.Class, reason string) (ErasureResult, error) {
	if id <= 0 {
		return ErasureResult{}, fmt.Errorf("erase employee: id %d: want a positive id", id)
	}
	return s.erase(ctx, []Erasure{{Kind: ErasureEmployee, Collection: string(Employees), SubjectID: id,
		Classes: classes, Cause: ErasureCauseRequest, Reason: reason}})
}

// EraseRecords erases the classes of the records ids of collection (their rows and every
// version of them), sticky, one erasure per record: for retention (cause ErasureCauseRetention
// + the rule's name, e.g. the health details of sicknesses that ended long ago) or a request.
func (s *Store) EraseRecords(ctx context.Context, collection string, ids []int64, classes []v1.Class, cause, reason string, opts ...EraseOptions) (ErasureResult, error) {
	if tableOf(collection) == nil {
		return ErasureResult{}, fmt.Errorf("erase records: unknown collection %q", collection)
	}
	es := make([]Erasure, 0, len(ids))
	for _, id := range ids {
		if id <= 0 {
			return ErasureResult{}, fmt.Errorf("erase %s: id %d: want a positive id", collection, id)
		}
		es = append(es, Erasure{Kind: ErasureRecord, Collection: collection, SubjectID: id, Classes: classes, Cause: cause, Reason: reason})
	}
	if len(es) == 0 {
		return ErasureResult{Rows: map[string]int64{}}, nil
	}
	return s.erase(ctx, es, opts...)
}

// EraseOptions shape a batched erase (EraseEmployees, EraseRecords).
type EraseOptions struct {
	// DryRun erases in a transaction it then rolls back: the result's Rows are what the erase
	// would change; nothing is recorded, logged or scrubbed, and IDs is empty.
	DryRun bool
}

// EraseEmployees erases the classes of each employee of ids everywhere the warehouse holds them
// (as EraseEmployee does one), sticky, one erasure per person, all in one transaction with one
// log entry and one scrub after: for retention (cause ErasureCauseRetention + the rule's name),
// where a rule falls due for many leavers at once and a scrub per person would rewrite the
// warehouse as many times.
func (s *Store) EraseEmployees(ctx context.Context, ids []int64, classes []v1.Class, cause, reason string, opts ...EraseOptions) (ErasureResult, error) {
	es := make([]Erasure, 0, len(ids))
	for _, id := range ids {
		if id <= 0 {
			return ErasureResult{}, fmt.Errorf("erase employee: id %d: want a positive id", id)
		}
		es = append(es, Erasure{Kind: ErasureEmployee, Collection: string(Employees), SubjectID: id, Classes: classes, Cause: cause, Reason: reason})
	}
	if len(es) == 0 {
		return ErasureResult{Rows: map[string]int64{}}, nil
	}
	return s.erase(ctx, es, opts...)
}

// Erasures lists every erasure, lifted ones included, oldest first.
func (s *Store) Erasures(ctx context.Context) ([]Erasure, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, kind, collection, subject_id, classes, cause, reason, `+
		s.d.read(KindTimestamp, "erased_at")+`, coalesce(`+s.d.read(KindTimestamp, "lifted_at")+`, ''), coalesce(lift_reason, '')
FROM erasures ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list erasures: %w", err)
	}
	defer rows.Close()
	var out []Erasure
	for rows.Next() {
		var e Erasure
		var classes string
		if err := rows.Scan(&e.ID, &e.Kind, &e.Collection, &e.SubjectID, &classes, &e.Cause, &e.Reason, &e.ErasedAt, &e.LiftedAt, &e.LiftReason); err != nil {
			return nil, fmt.Errorf("list erasures: %w", err)
		}
		if e.Classes, err = parseClasses(classes); err != nil {
			return nil, fmt.Errorf("list erasures: erasure %d: %w", e.ID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list erasures: %w", err)
	}
	return out, nil
}

// LiftErasure lifts the erasure id: it no longer holds, so the next sync brings the source's
// current values back. What the warehouse's history held stays erased. The lift is logged.
func (s *Store) LiftErasure(ctx context.Context, id int64, reason string) (Erasure, error) {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.d.serializeWrites(ctx, tx); err != nil { // the log's next id (auditID)
		return Erasure{}, fmt.Errorf("lift erasure %d: serialize writes: %w", id, busyErr(err))
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE erasures SET lifted_at = ?, lift_reason = ? WHERE id = ? AND lifted_at IS NULL`), now, reason, id)
	if err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, busyErr(err))
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Erasure{}, fmt.Errorf("lift erasure %d: no such erasure in force (listed by hrsync erase --list)", id)
	}
	var e Erasure
	var classes string
	err = tx.QueryRowxContext(ctx, tx.Rebind(`SELECT kind, collection, subject_id, classes, cause FROM erasures WHERE id = ?`), id).
		Scan(&e.Kind, &e.Collection, &e.SubjectID, &classes, &e.Cause)
	if err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, err)
	}
	e.ID, e.LiftedAt, e.LiftReason = id, now, reason
	if e.Classes, err = parseClasses(classes); err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, err)
	}
	// The fingerprints of the person's emails (erased.go) held them back from onboarding; lifted,
	// they have no use, and are not kept.
	lifted := map[string]int64{"erasures": 1}
	res, err = tx.ExecContext(ctx, tx.Rebind(`DELETE FROM erased_identities WHERE erasure_id = ?`), id)
	if err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, busyErr(err))
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		lifted["erased_identities"] = n
	}
	if err := logErasure(ctx, s.d, tx, now, "lift", e.Cause, reason, e.Subject(), classes, lifted); err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Erasure{}, fmt.Errorf("lift erasure %d: %w", id, busyErr(err))
	}
	if err := s.journalErasures(ctx); err != nil { // journal.go
		return e, fmt.Errorf("lift erasure %d: %w", id, err)
	}
	return e, nil
}

// Scrub makes what was erased unreadable in the database's files (dialect.scrub) for tables:
// an erase does it itself, so this is for one whose scrub failed (ErrNotScrubbed).
func (s *Store) Scrub(ctx context.Context, tables []string) error {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("scrub: %w", err)
	}
	defer conn.Close()
	if err := s.d.scrub(ctx, conn, tables); err != nil {
		return fmt.Errorf("scrub: %w", err)
	}
	s.scrubStatistics(ctx, conn)
	return nil
}

// checkClasses are the classes to erase, in v1.Classes' order, once each: every erasable class
// when none are given; an error for a class that is not erasable.
// erasableClasses are the classes an erasure can take, every one (v1.Class.Erasable).
var erasableClasses = slices.DeleteFunc(slices.Clone(v1.Classes), func(c v1.Class) bool { return !c.Erasable() })

func checkClasses(classes []v1.Class) ([]v1.Class, error) {
	var out []v1.Class
	for _, c := range v1.Classes {
		if c.Erasable() && (len(classes) == 0 || slices.Contains(classes, c)) {
			out = append(out, c)
		}
	}
	for _, c := range classes {
		if !c.Erasable() {
			return nil, fmt.Errorf("class %s is not erasable (employment facts and what is not personal stay)", c)
		}
	}
	return out, nil
}

func classNames(classes []v1.Class) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}

func parseClasses(s string) ([]v1.Class, error) {
	var out []v1.Class
	for _, name := range strings.Split(s, ",") {
		c, err := v1.ParseClass(name)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// erase records the erasures es (all of one kind and cause) and erases what they say, in one
// transaction, then scrubs the tables it changed.
func (s *Store) erase(ctx context.Context, es []Erasure, opts ...EraseOptions) (ErasureResult, error) {
	var opt EraseOptions
	for _, o := range opts {
		opt.DryRun = opt.DryRun || o.DryRun
	}
	res, err := s.eraseBatches(ctx, [][]Erasure{es}, opt)
	if len(res) == 0 {
		return ErasureResult{}, err
	}
	return res[0], err
}

// An ErasureBatch is erasures of the same classes and cause: of the employees IDs (Kind
// ErasureEmployee) or of the records IDs of Collection (ErasureRecord).
type ErasureBatch struct {
	Kind       string
	Collection string
	IDs        []int64
	Classes    []v1.Class
	Cause      string
	Reason     string
}

// EraseBatches erases the batches in order, in one transaction (each batch recorded, sticky, and
// logged on its own: its cause, its rows), then scrubs the tables they changed once: for a
// retention run, whose rules fall due together, so that the warehouse is rewritten once a run,
// not once a rule. It returns each batch's result; a batch of no ids changes nothing. With
// opts.DryRun the transaction is rolled back: the results are what the erase would change.
func (s *Store) EraseBatches(ctx context.Context, batches []ErasureBatch, opts EraseOptions) ([]ErasureResult, error) {
	var groups [][]Erasure
	for _, b := range batches {
		kind, collection := b.Kind, b.Collection
		if kind == ErasureEmployee {
			collection = string(Employees)
		} else if kind != ErasureRecord || tableOf(collection) == nil {
			return nil, fmt.Errorf("erase: batch of %s %q: want employees or a collection's records", kind, collection)
		}
		var es []Erasure
		for _, id := range b.IDs {
			if id <= 0 {
				return nil, fmt.Errorf("erase %s: id %d: want a positive id", collection, id)
			}
			es = append(es, Erasure{Kind: kind, Collection: collection, SubjectID: id, Classes: b.Classes, Cause: b.Cause, Reason: b.Reason})
		}
		groups = append(groups, es)
	}
	return s.eraseBatches(ctx, groups, opts)
}

// eraseBatches records the erasures of each group (all of one kind, classes and cause) and
// erases what they say, in one transaction, then scrubs the tables they changed.
func (s *Store) eraseBatches(ctx context.Context, groups [][]Erasure, opt EraseOptions) ([]ErasureResult, error) {
	results := make([]ErasureResult, len(groups))
	subjects := make([]string, len(groups))
	classes := make([][]v1.Class, len(groups))
	var what []string
	for i, es := range groups {
		results[i] = ErasureResult{Rows: map[string]int64{}}
		if len(es) == 0 {
			continue
		}
		var err error
		if classes[i], err = checkClasses(es[0].Classes); err != nil {
			return nil, fmt.Errorf("erase: %w", err)
		}
		cause := es[0].Cause
		if cause != ErasureCauseRequest && (!strings.HasPrefix(cause, ErasureCauseRetention) || len(cause) == len(ErasureCauseRetention)) {
			return nil, fmt.Errorf("erase: cause %q: want %q or %q followed by the rule", cause, ErasureCauseRequest, ErasureCauseRetention)
		}
		subjects[i] = es[0].Subject()
		if len(es) > 1 {
			ids := make([]string, len(es))
			for j, e := range es {
				ids[j] = strconv.FormatInt(e.SubjectID, 10)
			}
			subjects[i] = es[0].Collection + " " + strings.Join(ids, ",")
		}
		what = append(what, subjects[i])
	}
	if len(what) == 0 {
		return results, nil
	}
	subject := strings.Join(what, "; ")
	if len(what) > 1 {
		subject = fmt.Sprintf("%d batches", len(what))
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("erase %s: %w", subject, err)
	}
	defer conn.Close()
	done, err := s.d.beginErase(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("erase %s: %w", subject, err)
	}
	defer done()
	if err := s.eraseTx(ctx, conn, groups, classes, subjects, results, opt.DryRun); err != nil {
		return nil, fmt.Errorf("erase %s: %w", subject, busyErr(err))
	}
	if opt.DryRun {
		return results, nil
	}
	journaled := s.journalErasures(ctx) // outside the warehouse too: restores re-apply it (journal.go)
	var tables []string
	for _, r := range results {
		for t := range r.Rows {
			tables = append(tables, t)
		}
	}
	slices.Sort(tables)
	tables = slices.Compact(tables)
	if err := s.d.scrub(ctx, conn, tables); err != nil {
		return results, errors.Join(fmt.Errorf("erase %s: %w: %w", subject, ErrNotScrubbed, err), journaled)
	}
	s.scrubStatistics(ctx, conn)
	if journaled != nil {
		return results, fmt.Errorf("erase %s: %w", subject, journaled)
	}
	return results, nil
}

func (s *Store) eraseTx(ctx context.Context, conn *sqlx.Conn, groups [][]Erasure, classes [][]v1.Class, subjects []string, results []ErasureResult, dry bool) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.d.serializeWrites(ctx, tx); err != nil {
		return fmt.Errorf("serialize writes: %w", err)
	}
	sicknessDays, err := s.d.tableExists(ctx, s.db.DB, sicknessDaysTable)
	if err != nil {
		return err
	}
	for i, es := range groups {
		if len(es) == 0 {
			continue
		}
		res := &results[i]
		names := classNames(classes[i])
		for _, e := range es {
			var id int64
			err := tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO erasures (id, kind, collection, subject_id, classes, cause, reason, erased_at) `+
				s.d.givenID()+` VALUES (`+auditID("erasures")+`, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
				e.Kind, e.Collection, e.SubjectID, names, e.Cause, e.Reason, now).Scan(&id)
			if err != nil {
				return fmt.Errorf("record the erasure: %w", err)
			}
			res.IDs = append(res.IDs, id)
		}
		res.Rows["erasures"] = int64(len(es))
		// The erased set with these erasures in it: every copy of a person erased, by this
		// erasure or an earlier one, goes from what is changed now.
		set, err := loadErased(ctx, tx)
		if err != nil {
			return err
		}
		x := &eraser{d: s.d, tx: tx, set: set, decls: s.opts.Declarations, rows: res.Rows, sicknessDays: sicknessDays}
		if es[0].Kind == ErasureEmployee {
			// Only a person who asked to be erased is held back from onboarding (fingerprints): a
			// retention rule ends the keeping of a leaver's data, not the right to hire them
			// again, and lifting a retention erasure would bring the old record back.
			keep := es[0].Cause == ErasureCauseRequest
			for j, e := range es {
				if err = x.employee(ctx, res.IDs[j], e.SubjectID, classes[i], keep); err != nil {
					break
				}
			}
		} else {
			ids := make([]int64, len(es))
			for j, e := range es {
				ids[j] = e.SubjectID
			}
			err = x.records(ctx, tableOf(es[0].Collection), ids, classes[i])
			if err == nil && es[0].Collection == v1.Sicknesses.Name {
				for start := 0; start < len(ids) && err == nil; start += 500 {
					batch := ids[start:min(start+500, len(ids))]
					args := make([]any, len(batch))
					for j, id := range batch {
						args[j] = id
					}
					err = x.deleteSicknessDays(ctx, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(batch)), ", ")+")", args)
				}
			}
		}
		if err != nil {
			return err
		}
		action := "erase"
		if es[0].Cause != ErasureCauseRequest {
			action = "retention"
		}
		if err := logErasure(ctx, s.d, tx, now, action, es[0].Cause, es[0].Reason, subjects[i], names, res.Rows); err != nil {
			return err
		}
	}
	if dry {
		// What would change, and nothing more: the erasures recorded and logged go with the
		// rollback.
		for i := range results {
			results[i].IDs = nil
		}
		return tx.Rollback()
	}
	return tx.Commit()
}

// auditID is the id of the next row of an audit table (erasures, erasure_log), as a SQL
// expression: one more than the last. Ids are given, not drawn from a sequence, so that they
// run without gaps: a Postgres sequence is not rolled back with the transaction that drew from
// it, and a dry run (an erase rolled back) or a failed erase would leave a gap an auditor reads
// as an entry deleted. Every writer of these tables holds the warehouse's write lock
// (dialect.serializeWrites; on SQLite every write transaction is IMMEDIATE), so no two
// transactions give the same id.
func auditID(table string) string {
	return `(SELECT COALESCE(max(id), 0) + 1 FROM ` + table + `)`
}

// logErasure writes one entry of the audit ledger: counts, never values. tx holds the write
// lock (auditID).
func logErasure(ctx context.Context, d dialect, tx *sqlx.Tx, at, action, cause, reason, subject, classes string, rows map[string]int64) error {
	counts, err := json.Marshal(rows) // keys sorted
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO erasure_log (id, at, action, cause, reason, subject, classes, rows) `+
		d.givenID()+` VALUES (`+auditID("erasure_log")+`, ?, ?, ?, ?, ?, ?, ?)`), at, action, cause, reason, subject, classes, string(counts))
	if err != nil {
		return fmt.Errorf("log the erasure: %w", err)
	}
	return nil
}

// erasedSet is what the erasures in force say: the classes erased of each person (by employee
// id) and of each record (by collection and id).
type erasedSet struct {
	people  map[int64][]v1.Class
	records map[string]map[int64][]v1.Class
}

// loadErased reads the erasures in force: nil when there are none (the rule), so a load asks
// nothing more of any record.
func loadErased(ctx context.Context, q sqlx.QueryerContext) (*erasedSet, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, collection, subject_id, classes FROM erasures WHERE lifted_at IS NULL`)
	if err != nil {
		return nil, fmt.Errorf("read erasures: %w", err)
	}
	defer rows.Close()
	var set *erasedSet
	for rows.Next() {
		var kind, collection, names string
		var id int64
		if err := rows.Scan(&kind, &collection, &id, &names); err != nil {
			return nil, fmt.Errorf("read erasures: %w", err)
		}
		classes, err := parseClasses(names)
		if err != nil {
			return nil, fmt.Errorf("read erasures: %w", err)
		}
		if set == nil {
			set = &erasedSet{people: map[int64][]v1.Class{}, records: map[string]map[int64][]v1.Class{}}
		}
		if kind == ErasureEmployee {
			set.people[id] = union(set.people[id], classes)
			continue
		}
		if set.records[collection] == nil {
			set.records[collection] = map[int64][]v1.Class{}
		}
		set.records[collection][id] = union(set.records[collection][id], classes)
	}
	return set, rows.Err()
}

// union is the classes of a and b, once each.
func union(a, b []v1.Class) []v1.Class {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// nested is the nested function of v1.EraseJSON for collection's records: the classes erased of
// the person a nested person object names.
func (e *erasedSet) nested(collection string) func(string, int64) []v1.Class {
	people := personFields()[collection]
	return func(field string, id int64) []v1.Class {
		if e == nil || !people[field] {
			return nil
		}
		return e.people[id]
	}
}

// personFields are, per collection, its nested fields that name a person (an employee).
var personFields = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, t := range tables {
		fields, _, _ := v1.Declared(t.name)
		for _, f := range fields {
			if f.Kind == v1.Nested && f.Nested != nil && f.Nested.Target == string(Employees) {
				if out[t.name] == nil {
					out[t.name] = map[string]bool{}
				}
				out[t.name][f.Name] = true
			}
		}
	}
	return out
})

// eraseStaged is the record t as a load stages it under the erasures in force: with the
// classes erased of it (as a record, or as the person it is of) and of the people its nested
// objects name taken out (decls.EraseJSON: the members the configuration classes by their
// classes), then decoded again, so that every column staged says the same. ok is false when
// nothing is erased of it: t is staged as it is.
func eraseStaged[T any](c *collection[T], e *erasedSet, decls v1.Declarations, t *T) (out T, ok bool, err error) {
	id := c.id(t)
	own := e.records[c.name][id]
	if c.table.name == string(Employees) {
		own = union(own, e.people[id])
	}
	hit := len(own) > 0
	for _, r := range c.refs {
		if r.target != string(Employees) {
			continue
		}
		rid, _ := r.id(t).(int64)
		if classes, erased := e.people[rid]; erased {
			hit = true
			if r.field == "employee" { // an event of the person: its own members too
				own = union(own, classes)
			}
		}
	}
	if !hit {
		return out, false, nil
	}
	erased, err := decls.EraseJSON(c.name, c.json(t), own, e.nested(c.name))
	if err != nil {
		return out, false, fmt.Errorf("erase %s %d: %w", c.name, id, err)
	}
	out, err = c.decode(erased)
	if err != nil {
		return out, false, fmt.Errorf("erase %s %d: decode: %w", c.name, id, err)
	}
	return out, true, nil
}

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
	return x.onboarding(ctx, id, emails, classes)
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
