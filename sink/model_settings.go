package sink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ModelSettings are the settings the absence models read from the warehouse (schema 0028,
// docs/models.md "Working days" and "Bradford factor"): the configuration's models section,
// written by ApplyModelSettings so that every client of the warehouse's views gets the same
// answers.
type ModelSettings struct {
	// HolidayCalendar is the calendar of people who receive statutory holidays and whose
	// statutory holiday country names none (models.holiday_calendar): one of HolidayCalendars,
	// or CalendarNone (no public holidays).
	HolidayCalendar string
	// ClosureDays are the days the company is closed (models.closure_days): a working day for
	// nobody. Dates (UTC midnight).
	ClosureDays []time.Time
	// Bradford is models.bradford.
	Bradford BradfordSettings
}

// BradfordSettings are models.bradford.
type BradfordSettings struct {
	// WindowWeeks is the window a Bradford factor counts sickness in, ending on its as_of day
	// (52: the year to it).
	WindowWeeks int
	// Bands are the thresholds a score reaches bands at, rising: band n is a score of at least
	// Bands[n-1] (band 0 below the first).
	Bands []float64
	// ExcludeSicknessTypes are sickness types' names (the source's company_sicknesstype, any
	// case) left out of the factor (not of the absence figures).
	ExcludeSicknessTypes []string
}

// DefaultModelSettings are the settings with nothing configured: England and Wales, no closure
// days, a 52-week window, bands at 51, 201, 401 and 601, nothing excluded.
func DefaultModelSettings() ModelSettings {
	return ModelSettings{HolidayCalendar: CalendarEnglandAndWales,
		Bradford: BradfordSettings{WindowWeeks: 52, Bands: []float64{51, 201, 401, 601}}}
}

// The years the holiday tables cover: model_calendar's (schema 0020).
const holidayFirstYear, holidayLastYear = 1990, 2059

// ErrModelSettings is what Validate's errors wrap.
var ErrModelSettings = errors.New("invalid model settings")

// Validate says what is wrong with m, in a line naming the configuration key.
func (m ModelSettings) Validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrModelSettings}, args...)...)
	}
	if m.HolidayCalendar != CalendarNone && !slices.Contains(HolidayCalendars(), m.HolidayCalendar) {
		return fail("models.holiday_calendar %q: want one of %s, or %s", m.HolidayCalendar,
			strings.Join(HolidayCalendars(), ", "), CalendarNone)
	}
	for _, d := range m.ClosureDays {
		if d.Year() < holidayFirstYear || d.Year() > holidayLastYear {
			return fail("models.closure_days %s: want a day in %d to %d", d.Format(time.DateOnly), holidayFirstYear, holidayLastYear)
		}
	}
	if m.Bradford.WindowWeeks < 1 || m.Bradford.WindowWeeks > 520 {
		return fail("models.bradford.window_weeks %d: want 1 to 520", m.Bradford.WindowWeeks)
	}
	if len(m.Bradford.Bands) == 0 {
		return fail("models.bradford.bands: want at least one threshold")
	}
	for i, b := range m.Bradford.Bands {
		if b <= 0 || (i > 0 && b <= m.Bradford.Bands[i-1]) {
			return fail("models.bradford.bands %s: want thresholds above 0, each above the one before", formatBands(m.Bradford.Bands))
		}
	}
	for _, t := range m.Bradford.ExcludeSicknessTypes {
		if strings.TrimSpace(t) == "" {
			return fail("models.bradford.exclude_sickness_types: an empty name")
		}
	}
	return nil
}

func formatBands(bs []float64) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = strconv.FormatFloat(b, 'f', -1, 64)
	}
	return strings.Join(s, ", ")
}

// dayOff is a row of model_days_off.
type dayOff struct {
	calendar string
	day      time.Time
}

// modelSettingsRows are what ApplyModelSettings writes for m: the holidays of every calendar,
// the days off, the closure days and excluded types (sorted, without repeats) and the
// fingerprint of them all.
type modelSettingsRows struct {
	holidays    map[string][]Holiday
	daysOff     []dayOff
	closures    []string
	excluded    []string
	fingerprint string
}

func (m ModelSettings) rows() modelSettingsRows {
	var r modelSettingsRows
	h := sha256.New()
	fmt.Fprintf(h, "model settings v1\ncalendar %s\nwindow %d\nbands %s\n", m.HolidayCalendar, m.Bradford.WindowWeeks, formatBands(m.Bradford.Bands))
	for _, d := range m.ClosureDays {
		r.closures = append(r.closures, d.Format(time.DateOnly))
	}
	slices.Sort(r.closures)
	r.closures = slices.Compact(r.closures)
	for _, t := range m.Bradford.ExcludeSicknessTypes {
		r.excluded = append(r.excluded, strings.ToLower(strings.TrimSpace(t)))
	}
	slices.Sort(r.excluded)
	r.excluded = slices.Compact(r.excluded)
	fmt.Fprintf(h, "closures %s\nexcluded %q\n", strings.Join(r.closures, ","), r.excluded)
	r.holidays = map[string][]Holiday{}
	for _, c := range append(HolidayCalendars(), CalendarNone) {
		days := map[string]bool{}
		for _, hd := range Holidays(c, holidayFirstYear, holidayLastYear) {
			r.holidays[c] = append(r.holidays[c], hd)
			fmt.Fprintf(h, "%s %s %s\n", c, hd.Day.Format(time.DateOnly), hd.Name)
			days[hd.Day.Format(time.DateOnly)] = true
		}
		for _, d := range r.closures {
			days[d] = true
		}
		for _, d := range slices.Sorted(func(yield func(string) bool) {
			for d := range days {
				if !yield(d) {
					return
				}
			}
		}) {
			t, _ := time.Parse(time.DateOnly, d)
			r.daysOff = append(r.daysOff, dayOff{c, t})
		}
	}
	r.fingerprint = hex.EncodeToString(h.Sum(nil))
	return r
}

// dayNumberEpoch is day 0 of the models' day numbers, a Monday.
var dayNumberEpoch = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// ApplyModelSettings writes m and the public holidays (HolidayCalendars, from the library) into
// the warehouse's settings tables (schema 0028: model_settings, model_closure_days,
// model_bradford_bands, model_bradford_excluded_types, model_holidays, model_days_off), in one
// transaction, when they differ from what it last wrote (a fingerprint of them all, one query
// to check); then the refreshed models are stale, and the next RefreshModels writes them again.
// It reports whether it wrote. Call it before RefreshModels (a sync's end, `hrsync report`). A
// warehouse before 0028 has nothing to write: false, nil.
func (s *Store) ApplyModelSettings(ctx context.Context, m ModelSettings) (bool, error) {
	if err := m.Validate(); err != nil {
		return false, err
	}
	ok, err := s.d.tableExists(ctx, s.db.DB, "model_settings")
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("apply model settings: %w", err)
		}
		return false, err
	}
	r := m.rows()
	var stored string
	if err := s.db.GetContext(ctx, &stored, `SELECT fingerprint FROM model_settings WHERE id = 1`); err != nil {
		return false, fmt.Errorf("apply model settings: %w", err)
	}
	if stored == r.fingerprint {
		return false, nil
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("apply model settings: %w", busyErr(err))
	}
	defer tx.Rollback()
	// Two processes applying at once: the second waits, then finds it written.
	if err := tx.GetContext(ctx, &stored, `SELECT fingerprint FROM model_settings WHERE id = 1`+s.d.forUpdate()); err != nil {
		return false, fmt.Errorf("apply model settings: %w", err)
	}
	if stored == r.fingerprint {
		return false, nil
	}
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
			return fmt.Errorf("apply model settings: %w", err)
		}
		return nil
	}
	// insert writes rows of n columns into table, a few hundred a statement.
	insert := func(table string, n int, rows [][]any) error {
		const per = 400
		for len(rows) > 0 {
			batch := rows[:min(per, len(rows))]
			rows = rows[len(batch):]
			one := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
			var args []any
			for _, row := range batch {
				args = append(args, row...)
			}
			if err := exec(`INSERT INTO `+table+` VALUES `+strings.TrimSuffix(strings.Repeat(one+", ", len(batch)), ", "), args...); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range []string{"model_closure_days", "model_bradford_bands", "model_bradford_excluded_types", "model_holidays", "model_days_off"} {
		if err := exec(`DELETE FROM ` + t); err != nil {
			return false, err
		}
	}
	var closures, bands, excluded, holidays, off [][]any
	for _, d := range r.closures {
		closures = append(closures, []any{d})
	}
	for i, b := range m.Bradford.Bands {
		bands = append(bands, []any{i + 1, strconv.FormatFloat(b, 'f', -1, 64)})
	}
	for _, t := range r.excluded {
		excluded = append(excluded, []any{t})
	}
	for _, c := range slices.Sorted(func(yield func(string) bool) {
		for c := range r.holidays {
			if !yield(c) {
				return
			}
		}
	}) {
		for _, h := range r.holidays[c] {
			holidays = append(holidays, []any{c, h.Day.Format(time.DateOnly), h.Name})
		}
	}
	for _, o := range r.daysOff {
		dn := int(o.day.Sub(dayNumberEpoch).Hours() / 24)
		month := time.Date(o.day.Year(), o.day.Month(), 1, 0, 0, 0, 0, time.UTC)
		off = append(off, []any{o.calendar, o.day.Format(time.DateOnly), dn, month.Format(time.DateOnly), dn % 7})
	}
	for _, w := range []struct {
		table string
		n     int
		rows  [][]any
	}{
		{"model_closure_days (day)", 1, closures},
		{"model_bradford_bands (band, threshold)", 2, bands},
		{"model_bradford_excluded_types (name)", 1, excluded},
		{"model_holidays (calendar, day, name)", 3, holidays},
		{"model_days_off (calendar, day, dn, month, dow)", 5, off},
	} {
		if err := insert(w.table, w.n, w.rows); err != nil {
			return false, err
		}
	}
	if err := exec(`UPDATE model_settings SET holiday_calendar = ?, bradford_window_weeks = ?, fingerprint = ? WHERE id = 1`,
		m.HolidayCalendar, m.Bradford.WindowWeeks, r.fingerprint); err != nil {
		return false, err
	}
	// The refreshed models were written under other settings: stale until refreshed again.
	if err := exec(`UPDATE model_refreshes SET version = -1`); err != nil {
		return false, err
	}
	if err := s.d.analyzeSmall(ctx, tx, "model_days_off"); err != nil {
		return false, fmt.Errorf("apply model settings: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("apply model settings: %w", busyErr(err))
	}
	s.log.Debug("model settings applied", "calendar", m.HolidayCalendar, "closure_days", len(r.closures),
		"window_weeks", m.Bradford.WindowWeeks, "holidays", len(holidays))
	return true, nil
}
