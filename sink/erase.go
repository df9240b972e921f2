package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// beginEraseTx begins an erase's transaction on conn, waiting for then excluding the other
// writers (merges, creates), and says whether the warehouse has model_sickness_working_days
// (schema 0029), which an erase of a person's sicknesses reaches too.
func (s *Store) beginEraseTx(ctx context.Context, conn *sqlx.Conn) (*sqlx.Tx, bool, error) {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	if err := s.d.serializeWrites(ctx, tx); err != nil {
		_ = tx.Rollback()
		return nil, false, fmt.Errorf("serialize writes: %w", err)
	}
	sicknessDays, err := s.d.tableExists(ctx, s.db.DB, sicknessDaysTable)
	if err != nil {
		_ = tx.Rollback()
		return nil, false, err
	}
	return tx, sicknessDays, nil
}

func (s *Store) eraseTx(ctx context.Context, conn *sqlx.Conn, groups [][]Erasure, classes [][]v1.Class, subjects []string, results []ErasureResult, dry bool) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	tx, sicknessDays, err := s.beginEraseTx(ctx, conn)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
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
