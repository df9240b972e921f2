package sink

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
)

// sicknessDaysTable is the table model_bradford reads each sickness piece's working days and
// spell start from (schema 0029), written by RefreshModels with the refreshed models and
// recorded in model_refreshes under its name. The view reads it only while that record is fresh
// (the warehouse's version and today), and works out every piece it does not answer as 0028 did.
const sicknessDaysTable = "model_sickness_working_days"

// sicknessPiece is a sickness cut to one employed span, as model_bradford cuts it, with what
// its rules need; day numbers are days since 1900-01-01 (a Monday).
type sicknessPiece struct {
	Employee  int64
	ID        int64
	S         int // the sickness's first day
	E         int // its last (today for an open one)
	HalfStart bool
	HalfEnd   bool
	Week      int
	Calendar  string
	MS        int // the employment's first day
	Excluded  bool
	Lo        int
	Hi        int
}

// sicknessSpan is a sickness as model_bradford's spell test reads the earlier ones.
type sicknessSpan struct {
	Employee, ID int64
	S, E         int
	Excluded     bool
}

// writeSicknessDays writes model_sickness_working_days, within tx, from the warehouse as tx
// sees it: each piece's rules of model_bradford (schema/postgres/0028_models_working_days.sql)
// with no window, that is from the employment's first day to today. It returns how many rows
// it deleted or inserted (only those that changed: writeSicknessDaysDiff).
func (s *Store) writeSicknessDays(ctx context.Context, tx *sqlx.Tx) (int, error) {
	pg := s.d.name() == schema.Postgres
	dn := func(expr string) string {
		if pg {
			return "(" + expr + ") - date '1900-01-01'"
		}
		return "CAST(julianday(" + expr + ") - 2415020.5 AS INTEGER)"
	}
	today := s.d.today()
	excluded := `(EXISTS (SELECT 1 FROM model_bradford_excluded_types)
    AND coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), false))`
	if !pg {
		today = `date('now')`
		excluded = `(EXISTS (SELECT 1 FROM model_bradford_excluded_types)
    AND coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), 0))`
	}
	var todayN int
	if err := tx.GetContext(ctx, &todayN, `SELECT `+dn(today)); err != nil {
		return 0, fmt.Errorf("today: %w", err)
	}
	off := map[string]map[int]bool{}
	rows, err := tx.QueryxContext(ctx, `SELECT calendar, dn FROM model_days_off`)
	if err != nil {
		return 0, fmt.Errorf("days off: %w", err)
	}
	for rows.Next() {
		var c string
		var d int
		if err := rows.Scan(&c, &d); err != nil {
			rows.Close()
			return 0, fmt.Errorf("days off: %w", err)
		}
		if off[c] == nil {
			off[c] = map[int]bool{}
		}
		off[c][d] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("days off: %w", err)
	}
	// The pieces: the sicknesses cut to model_employed_spans, worked out here from the
	// employment and its versions directly (the same pieces: a span is the employment cut to a
	// version), each worked out once: the view joined to the sicknesses took 2.4x as long on
	// Postgres and worked the spans out again per sickness on SQLite.
	q := `SELECT k.employee_id, k.id, ` + dn("k.start_date") + ` AS s, ` + dn("k.end_date") + ` AS e,
    k.half_start, k.half_end, coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar,
    ` + dn("em.start_date") + ` AS ms, ` + excluded + ` AS excluded,
    ` + dn("greatest(k.start_date, em.start_date, v.valid_from)") + ` AS lo,
    ` + dn("least(k.end_date, coalesce(em.end_date, "+today+"), v.valid_to - 1, "+today+")") + ` AS hi
FROM model_sicknesses k
JOIN model_employment em ON em.employee_id = k.employee_id
JOIN model_employee_versions v ON v.employee_id = k.employee_id AND v.valid_from <= k.end_date AND k.start_date < v.valid_to
LEFT JOIN model_pattern_weeks pw ON pw.id = v.working_pattern_id
LEFT JOIN model_employee_calendars ec ON ec.employee_id = k.employee_id`
	if !pg {
		q = `WITH em AS MATERIALIZED (SELECT employee_id, start_date, end_date FROM model_employment),
cal AS MATERIALIZED (SELECT employee_id, calendar FROM model_employee_calendars)
SELECT k.employee_id, k.id, ` + dn("k.start_date") + ` AS s, ` + dn("k.end_date") + ` AS e,
    k.half_start, k.half_end, coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar,
    ` + dn("em.start_date") + ` AS ms, ` + excluded + ` AS excluded,
    ` + dn("max(k.start_date, em.start_date, v.valid_from)") + ` AS lo,
    ` + dn("min(k.end_date, coalesce(em.end_date, date('now')), date(v.valid_to, '-1 day'), date('now'))") + ` AS hi
FROM model_sicknesses k
JOIN em ON em.employee_id = k.employee_id
JOIN model_employee_versions v ON v.employee_id = k.employee_id
    AND v.valid_from <= min(k.end_date, coalesce(em.end_date, k.end_date))
    AND date(max(k.start_date, em.start_date), '+1 day') <= v.valid_to
LEFT JOIN model_pattern_weeks pw ON pw.id = v.working_pattern_id
LEFT JOIN cal ec ON ec.employee_id = k.employee_id`
	}
	q = `SELECT * FROM (` + q + `) x WHERE lo <= hi`
	var pieces []sicknessPiece
	prows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("sickness pieces: %w", err)
	}
	for prows.Next() { // scanned by hand: sqlx's reflection was a good part of the time
		var p sicknessPiece
		if err := prows.Scan(&p.Employee, &p.ID, &p.S, &p.E, &p.HalfStart, &p.HalfEnd, &p.Week, &p.Calendar,
			&p.MS, &p.Excluded, &p.Lo, &p.Hi); err != nil {
			prows.Close()
			return 0, fmt.Errorf("sickness pieces: %w", err)
		}
		pieces = append(pieces, p)
	}
	prows.Close()
	if err := prows.Err(); err != nil {
		return 0, fmt.Errorf("sickness pieces: %w", err)
	}
	// The earlier sicknesses a piece's spell test reads are the employee's sicknesses with a
	// piece: one wholly outside the employment ends before its first day (it starts no later
	// than the piece's sickness, which is in it), and joins nothing.
	byEmployee := map[int64][]sicknessSpan{}
	seen := map[int64]bool{}
	for _, p := range pieces {
		if !seen[p.ID] {
			seen[p.ID] = true
			byEmployee[p.Employee] = append(byEmployee[p.Employee], sicknessSpan{p.Employee, p.ID, p.S, p.E, p.Excluded})
		}
	}
	out := make([][]any, 0, len(pieces))
	for _, p := range pieces {
		out = append(out, sicknessDaysRow(p, byEmployee[p.Employee], off[p.Calendar], todayN, pg))
	}
	n, err := s.writeSicknessDaysDiff(ctx, tx, out)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", sicknessDaysTable, err)
	}
	if n > 0 { // its statistics, for the view's join to it
		if err := s.d.analyzeSmall(ctx, tx, sicknessDaysTable); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// sicknessKey is a row's key in model_sickness_working_days, and sicknessValue the rest of it,
// each value as the database hands it back (days as its text, and its type on SQLite).
type sicknessKey struct {
	id int64
	lo int64
}

type sicknessValue struct {
	employee, hi    int64
	days            string
	counted, starts bool
	joinLo          int64
	joined          bool
}

// sicknessValueOf reads a row's values (employee_id, hi, days, counted, starts, join_lo) as
// written (sicknessDaysRow) or as read back.
func sicknessValueOf(emp, hi, days, counted, starts, jl any) sicknessValue {
	num := func(v any) int64 {
		switch x := v.(type) {
		case int:
			return int64(x)
		case int64:
			return x
		}
		return 0
	}
	flag := func(v any) bool {
		switch x := v.(type) {
		case bool:
			return x
		default:
			return num(v) != 0
		}
	}
	var d string
	switch x := days.(type) {
	case string:
		d = x
	case []byte:
		d = string(x)
	case int64:
		d = "i" + strconv.FormatInt(x, 10)
	case float64:
		d = "f" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return sicknessValue{employee: num(emp), hi: num(hi), days: d, counted: flag(counted), starts: flag(starts),
		joinLo: num(jl), joined: jl != nil}
}

// writeSicknessDaysDiff makes model_sickness_working_days hold rows (each as sicknessDaysRow
// gives it), writing only the rows that differ from what it holds: a refresh after a day's sync
// changes a few of its hundreds of thousands of rows, and rewriting them all cost seconds (and
// as many dead rows on Postgres). It returns how many rows it deleted and inserted.
func (s *Store) writeSicknessDaysDiff(ctx context.Context, tx *sqlx.Tx, rows [][]any) (int, error) {
	pg := s.d.name() == schema.Postgres
	days := "days"
	if pg {
		days = "days::text"
	}
	held := map[sicknessKey]sicknessValue{}
	r, err := tx.QueryContext(ctx, `SELECT id, lo, employee_id, hi, `+days+`, counted, starts, join_lo FROM `+sicknessDaysTable)
	if err != nil {
		return 0, err
	}
	for r.Next() {
		var k sicknessKey
		var emp, hi int64
		var d, counted, starts, jl any
		if err := r.Scan(&k.id, &k.lo, &emp, &hi, &d, &counted, &starts, &jl); err != nil {
			r.Close()
			return 0, err
		}
		held[k] = sicknessValueOf(emp, hi, d, counted, starts, jl)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return 0, err
	}
	var del []any
	var ins [][]any
	seen := make(map[sicknessKey]bool, len(rows))
	for _, row := range rows {
		k := sicknessKey{row[1].(int64), int64(row[2].(int))}
		seen[k] = true
		v, ok := held[k]
		if ok && v == sicknessValueOf(row[0], row[3], row[4], row[5], row[6], row[7]) {
			continue
		}
		if ok {
			del = append(del, k.id, k.lo)
		}
		ins = append(ins, row)
	}
	for k := range held {
		if !seen[k] {
			del = append(del, k.id, k.lo)
		}
	}
	if len(del)/2 > len(held)/2 {
		// Most of it changed (new settings, the first refresh): written again whole.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+sicknessDaysTable); err != nil {
			return 0, err
		}
		del, ins = nil, rows
	}
	const per = 400
	pair := "(?, ?), "
	if pg {
		pair = "(?::bigint, ?::integer), "
	}
	for start := 0; start < len(del); start += 2 * per {
		batch := del[start:min(start+2*per, len(del))]
		q := `DELETE FROM ` + sicknessDaysTable + ` WHERE (id, lo) IN (VALUES ` +
			strings.TrimSuffix(strings.Repeat(pair, len(batch)/2), ", ") + `)`
		if _, err := tx.ExecContext(ctx, tx.Rebind(q), batch...); err != nil {
			return 0, err
		}
	}
	if len(ins) > 0 {
		cols := []string{"employee_id", "id", "lo", "hi", "days", "counted", "starts", "join_lo"}
		if err := s.d.stage(ctx, tx, sicknessDaysTable, cols, ins); err != nil {
			return 0, err
		}
	}
	return len(del)/2 + len(ins), nil
}

// sicknessDaysRow is p's row of model_sickness_working_days: the rules of 0028's
// model_bradford for a window from before p's employment to today (day todayN), with others
// the employee's sicknesses and off the days off of p's calendar. Its days are typed as the
// view's arithmetic types them (Postgres: numeric text, "3", "2.5", "2.0"; SQLite: an integer
// when no half day is taken, else a real), so that the sums read from it are the ones it gives.
func sicknessDaysRow(p sicknessPiece, others []sicknessSpan, off map[int]bool, todayN int, pg bool) []any {
	working := func(d int) bool { return (p.Week>>(d%7))&1 == 1 && !off[d] }
	count := func(a, b int) int {
		n := 0
		for d := a; d <= b; d++ {
			if working(d) {
				n++
			}
		}
		return n
	}
	full := count(p.Lo, p.Hi)
	halves := 0
	if p.HalfStart && p.S >= p.Lo && p.S <= p.Hi && working(p.S) {
		halves++
	}
	if p.HalfEnd && p.E >= p.Lo && p.E <= p.Hi && working(p.E) && (p.S != p.E || !p.HalfStart) {
		halves++
	}
	counted := !p.Excluded && full > 0
	var joinLo *int
	if counted {
		for _, k := range others {
			own := k.ID == p.ID
			if k.S > p.S || (!own && (k.E < p.S-31 || k.Excluded || (k.S == p.S && k.ID > p.ID))) {
				continue
			}
			a2, b2 := max(k.S, p.MS), min(k.E, todayN)
			if own {
				b2 = p.Lo - 1
			}
			if a2 <= b2 && count(a2, b2) > 0 && (b2 >= p.Lo-1 || count(b2+1, p.Lo-1) == 0) {
				if joinLo == nil || a2 > *joinLo {
					joinLo = &a2
				}
			}
		}
	}
	var days, starts, cnt any
	if pg {
		if halves == 0 {
			days = strconv.Itoa(full)
		} else {
			h := 2*full - halves
			days = strconv.Itoa(h/2) + "." + strconv.Itoa(h%2*5)
		}
		starts, cnt = counted && joinLo == nil, counted
	} else {
		if halves == 0 {
			days = int64(full)
		} else {
			days = float64(full) - 0.5*float64(halves)
		}
		starts, cnt = b2i(counted && joinLo == nil), b2i(counted)
	}
	var jl any
	if joinLo != nil {
		jl = *joinLo
	}
	return []any{p.Employee, p.ID, p.Lo, p.Hi, days, cnt, starts, jl}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
