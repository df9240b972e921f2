package sink

import (
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/v1"
)

// The data inventory: every column of every table the warehouse keeps, with the class of
// personal data it holds (v1.Class). The collections' columns take their classes from the
// declarations (collections.go, records.go, and the wire's in package v1); the columns the
// warehouse keeps for itself and its other tables are listed here. TestInventoryIsTheWarehouse
// fails, on either database, when a migrated column is not in the inventory or an inventoried
// one is not migrated, so the inventory cannot fall behind the schema.

// InventoryItem is one column of the warehouse.
type InventoryItem struct {
	Table, Column string
	// Class is what kind of personal data the column holds; for a JSON column of several
	// members (extra, nested, sent, an onboarding answer), the most sensitive of them.
	Class v1.Class
	// Holds says what the column holds, where its name does not.
	Holds string
}

// Inventory lists every column of every table of the warehouse: the collections first, in the
// order a sync loads them, each followed by its history, then the warehouse's own tables. It is
// the inventory of the code's declarations alone (InventoryOf the zero v1.Declarations), one
// item per column.
func Inventory() []InventoryItem { return InventoryOf(v1.Declarations{}) }

// InventoryOf is Inventory by decls: the members of records a configuration classes
// (v1.Declarations.Configured) are listed after their collection's extra column, an item each,
// as rows of that column with their class (their name in Holds), and the sent column, which
// holds them too, is as sensitive as the most sensitive of them.
func InventoryOf(decls v1.Declarations) []InventoryItem {
	var out []InventoryItem
	for _, t := range tables {
		out = append(out, collectionInventory(t, t.name, decls)...)
		if t.history {
			h := t.name + "_history"
			out = append(out,
				InventoryItem{h, "valid_from", v1.NotPersonal, "when the warehouse wrote this version"},
				InventoryItem{h, "valid_to", v1.NotPersonal, "when a later version (or the row's removal) replaced it; null for the current one"})
			for _, it := range collectionInventory(t, h, decls) {
				if it.Column != "synced_at" {
					it.Holds = "every version of " + t.name + "." + it.Column + joinHolds(it.Holds)
					out = append(out, it)
				}
			}
		}
	}
	return append(out, ownInventory()...)
}

// collectionInventory is the inventory of a collection's table t, under the name table (t's
// own, or its history's), with the members decls classes.
func collectionInventory(t *table, table string, decls v1.Declarations) []InventoryItem {
	configured := decls.Configured(t.name)
	var out []InventoryItem
	refs := map[string]refDef{}
	for _, r := range t.refs {
		refs[r.column] = r
	}
	about := v1.NotPersonal // a record about a person: when it went is a fact of their employment
	for _, c := range t.cols {
		if columnHolds[c.name] == "" && c.class.Personal() {
			about = v1.Employment
		}
	}
	for _, c := range t.cols {
		it := InventoryItem{Table: table, Column: c.name, Class: c.class, Holds: columnHolds[c.name]}
		if r, ok := refs[c.name]; ok {
			it.Holds = "the " + r.field + " (a row of " + r.target + ")"
		} else if c.kind == KindID && it.Holds == "" {
			it.Holds = "the " + strings.TrimSuffix(c.name, "_id") + "'s id at the source"
		}
		if c.name == "extra" && len(configured) > 0 {
			it.Holds = "the members of the record no declaration names but those the configuration classes (the rows below) (JSON)"
		}
		if c.name == "sent" {
			for _, f := range configured {
				it.Class = mostSensitive(it.Class, f.Class)
			}
		}
		out = append(out, it)
		if c.name == "extra" {
			for _, f := range configured {
				out = append(out, InventoryItem{table, "extra", f.Class, "its member " + f.Name + ", classed by the configuration (personal_data.members)"})
			}
		}
	}
	return append(out,
		InventoryItem{table, "listed", v1.NotPersonal, "whether the source lists the record (false: only known as a reference)"},
		InventoryItem{table, "origin", v1.NotPersonal, "where the row came from: a sync, or a create through serve"},
		InventoryItem{table, "deleted_at", about, deletedHolds[t.name == string(Employees)]},
		InventoryItem{table, "synced_at", v1.NotPersonal, "when a sync last wrote the row"},
	)
}

// deletedHolds is what deleted_at holds, for employees (true) and the rest.
var deletedHolds = map[bool]string{false: "when the source stopped listing the record",
	true: "when the source stopped listing the employee: a leaver's last sign where no leaving date is sent"}

// columnHolds are what the columns every collection has hold.
var columnHolds = map[string]string{
	"id":     "the record's id at the source",
	"extra":  "the members of the record no declaration names (JSON)",
	"nested": "the nested objects (the people and things the record points at) as the source sent them (JSON)",
	"sent":   "the whole record exactly as the source sent it, every member above included (JSON)",
}

func joinHolds(h string) string {
	if h == "" {
		return ""
	}
	return ": " + h
}

// ownInventory is the inventory of the warehouse's tables that are not collections: its ledgers
// and bookkeeping.
func ownInventory() []InventoryItem {
	var totals []InventoryItem // meta keeps each collection's Total
	for _, t := range tables {
		totals = append(totals, InventoryItem{"meta", t.name + "_total", v1.NotPersonal, "the collection's Total"})
	}
	return slices.Concat(ownTables[:5], totals, ownTables[5:], modelInventory)
}

// modelInventory are the people models (docs/models.md): the calendar they report on, and views
// computed from employees and their history, which hold nothing the tables do not. A person's
// employment and versions are facts of their employment, and so are when they were off and for
// how many days (the absence models, schema 0023: as sicknesses' dates are, not their reasons);
// the aggregates are counts of people and of days.
var modelInventory = append([]InventoryItem{
	{"model_calendar", "day", v1.NotPersonal, "a day, 1990-01-01 to 2059-12-31"},
	{"model_calendar", "month", v1.NotPersonal, ""},
	{"model_calendar", "month_end", v1.NotPersonal, ""},
	{"model_calendar", "year", v1.NotPersonal, ""},
	{"model_calendar", "month_day", v1.NotPersonal, ""},

	{"model_employment", "employee_id", v1.Employment, "a view of employees and their history (it follows them): an employee's employment"},
	{"model_employment", "start_date", v1.Employment, "their join date"},
	{"model_employment", "end_date", v1.Employment, "their leaving day, by the leavers' rule"},
	{"model_employment", "left_by", v1.Employment, "where the leaving day comes from"},

	{"model_people", "employee_id", v1.Employment, "a view of employees and their history (it follows them): what the employment rule makes of each person (schema 0027)"},
	{"model_people", "status", v1.Employment, "their status as the source sends it"},
	{"model_people", "start_date", v1.Employment, "their join date"},
	{"model_people", "end_date", v1.Employment, "their leaving day, where it is known"},
	{"model_people", "left_by", v1.Employment, "where the leaving day comes from, or unknown"},
	{"model_people", "first_seen", v1.Employment, "the day the warehouse first saw them"},

	{"model_left_out", "employee_id", v1.Employment, "a view of employees and their history (it follows them): a person the models leave out, and why (schema 0027)"},
	{"model_left_out", "reason", v1.Employment, "no_join_date or no_leaving_date"},
	{"model_left_out", "status", v1.Employment, ""},
	{"model_left_out", "start_date", v1.Employment, ""},
	{"model_left_out", "end_date", v1.Employment, ""},
	{"model_left_out", "first_seen", v1.Employment, ""},

	{"model_starting_soon", "employee_id", v1.Employment, "a view of employees (it follows them): a person whose start date is still to come (schema 0027)"},
	{"model_starting_soon", "start_date", v1.Employment, ""},
	{"model_starting_soon", "department_id", v1.Employment, ""},
	{"model_starting_soon", "department", v1.Employment, "the department's name"},
	{"model_starting_soon", "line_manager_id", v1.Employment, ""},

	{"model_employee_versions", "employee_id", v1.Employment, "a table kept from employees' history by its triggers (it follows it): the periods of their department, division, location and pattern"},
	{"model_employee_versions", "valid_from", v1.Employment, ""},
	{"model_employee_versions", "valid_to", v1.Employment, ""},
	{"model_employee_versions", "department_id", v1.Employment, ""},
	{"model_employee_versions", "division_id", v1.Employment, ""},
	{"model_employee_versions", "location_id", v1.Employment, ""},
	{"model_employee_versions", "working_pattern_id", v1.Employment, ""},

	{"model_employee_versions_derived", "employee_id", v1.Employment, "a view of employees' history (it follows it): model_employee_versions as history gives it, what the table's triggers read"},
	{"model_employee_versions_derived", "valid_from", v1.Employment, ""},
	{"model_employee_versions_derived", "valid_to", v1.Employment, ""},
	{"model_employee_versions_derived", "department_id", v1.Employment, ""},
	{"model_employee_versions_derived", "division_id", v1.Employment, ""},
	{"model_employee_versions_derived", "location_id", v1.Employment, ""},
	{"model_employee_versions_derived", "working_pattern_id", v1.Employment, ""},

	{"model_employed_spans", "employee_id", v1.Employment, "a view of the versions cut to the days employed (it follows them): what the headcount models count"},
	{"model_employed_spans", "department_id", v1.Employment, ""},
	{"model_employed_spans", "division_id", v1.Employment, ""},
	{"model_employed_spans", "location_id", v1.Employment, ""},
	{"model_employed_spans", "working_pattern_id", v1.Employment, ""},
	{"model_employed_spans", "fte", v1.Employment, "their full-time equivalent then"},
	{"model_employed_spans", "lo", v1.Employment, "the first day of the span"},
	{"model_employed_spans", "hi", v1.Employment, "its last day"},
	{"model_employed_spans", "zero_hours", v1.Employment, "1 when their pattern then has no contracted hours (FTE 0)"},

	{"model_absence_spans", "employee_id", v1.Employment, "a view of absences and sicknesses cut to the employed spans (it follows them): when someone was off, not why"},
	{"model_absence_spans", "kind", v1.Employment, "sickness, holiday or other"},
	{"model_absence_spans", "id", v1.Employment, "the absence's or sickness's id"},
	{"model_absence_spans", "start_date", v1.Employment, ""},
	{"model_absence_spans", "end_date", v1.Employment, ""},
	{"model_absence_spans", "half_start", v1.Employment, ""},
	{"model_absence_spans", "half_end", v1.Employment, ""},
	{"model_absence_spans", "lo", v1.Employment, "the first day of the piece"},
	{"model_absence_spans", "hi", v1.Employment, "its last day"},
	{"model_absence_spans", "department_id", v1.Employment, ""},
	{"model_absence_spans", "division_id", v1.Employment, ""},
	{"model_absence_spans", "location_id", v1.Employment, ""},
	{"model_absence_spans", "working_pattern_id", v1.Employment, ""},
	{"model_absence_spans", "week", v1.Employment, "the days the pattern works"},
	{"model_absence_spans", "calendar", v1.Employment, "the public holiday calendar the person's days off are of (schema 0028)"},

	{"model_absences", "employee_id", v1.Employment, "a view of absences (it follows them): those the absence models count; when someone was off, not why"},
	{"model_absences", "kind", v1.Employment, "holiday or other"},
	{"model_absences", "id", v1.Employment, ""},
	{"model_absences", "start_date", v1.Employment, ""},
	{"model_absences", "end_date", v1.Employment, ""},
	{"model_absences", "half_start", v1.Employment, ""},
	{"model_absences", "half_end", v1.Employment, ""},

	{"model_sicknesses", "employee_id", v1.Employment, "a view of sicknesses (it follows them): those the absence models count, an open one to today; when someone was off sick, not why"},
	{"model_sicknesses", "id", v1.Employment, ""},
	{"model_sicknesses", "start_date", v1.Employment, ""},
	{"model_sicknesses", "end_date", v1.Employment, ""},
	{"model_sicknesses", "half_start", v1.Employment, ""},
	{"model_sicknesses", "half_end", v1.Employment, ""},
	{"model_sicknesses", "sickness_type", v1.Health, "the sickness type's name, which the Bradford factor may leave out (schema 0028): why someone was off"},

	{"model_pattern_weeks", "id", v1.NotPersonal, "a view of working patterns: the days each works"},
	{"model_pattern_weeks", "week", v1.NotPersonal, ""},
	{"model_pattern_weeks", "zero_hours", v1.NotPersonal, "a pattern of no contracted hours (schema 0028)"},

	{"model_settings", "id", v1.NotPersonal, "the models section of the configuration, as the last sync or report wrote it (schema 0028)"},
	{"model_settings", "holiday_calendar", v1.NotPersonal, ""},
	{"model_settings", "bradford_window_weeks", v1.NotPersonal, ""},
	{"model_settings", "fingerprint", v1.NotPersonal, "a hash of the settings and holidays written"},
	{"model_closure_days", "day", v1.NotPersonal, "a company closure day"},
	{"model_bradford_bands", "band", v1.NotPersonal, "a Bradford band"},
	{"model_bradford_bands", "threshold", v1.NotPersonal, "the score it starts at"},
	{"model_bradford_excluded_types", "name", v1.NotPersonal, "a sickness type the Bradford factor leaves out (a type's name, of no one)"},
	{"model_holidays", "calendar", v1.NotPersonal, "a public holiday of a calendar, from the holiday library"},
	{"model_holidays", "day", v1.NotPersonal, ""},
	{"model_holidays", "name", v1.NotPersonal, ""},
	{"model_days_off", "calendar", v1.NotPersonal, "a view: each calendar's days off (holidays and closure days)"},
	{"model_days_off", "day", v1.NotPersonal, ""},
	{"model_days_off", "dn", v1.NotPersonal, "the day's number since 1900-01-01"},
	{"model_days_off", "month", v1.NotPersonal, ""},
	{"model_days_off", "dow", v1.NotPersonal, "its weekday, 0 Monday"},
	{"model_holiday_countries", "name", v1.NotPersonal, "a statutory holiday country's name, folded"},
	{"model_holiday_countries", "calendar", v1.NotPersonal, "its calendar; none for the default"},
	{"model_employee_calendars", "employee_id", v1.Employment, "a view of employees (it follows them): whose public holidays a person's days off are (schema 0028)"},
	{"model_employee_calendars", "holiday_country", v1.Employment, "their statutory holiday country's name, as the source sends it"},
	{"model_employee_calendars", "calendar", v1.Employment, ""},
	{"model_employee_calendars", "calendar_from", v1.Employment, "country, default, unknown country or no statutory holidays"},

	{"model_refreshes", "model", v1.NotPersonal, "a model kept as a table: when it was last written"},
	{"model_refreshes", "refreshed_at", v1.NotPersonal, ""},
	{"model_refreshes", "version", v1.NotPersonal, "the warehouse's version it was written from"},
	{"model_refreshes", "today", v1.NotPersonal, ""},
	{"model_refreshes", "took_ms", v1.NotPersonal, ""},

	{"model_absence_days", "employee_id", v1.Employment, "a view (it follows absences and sicknesses): a working day someone was off, and as what"},
	{"model_absence_days", "day", v1.Employment, ""},
	{"model_absence_days", "kind", v1.Employment, "sickness, holiday or other"},
	{"model_absence_days", "days", v1.Employment, "1, or 0.5 for a half day"},
	{"model_absence_days", "department_id", v1.Employment, ""},
	{"model_absence_days", "division_id", v1.Employment, ""},
	{"model_absence_days", "location_id", v1.Employment, ""},

	{"model_sickness_working_days", "employee_id", v1.Employment, "a table written by each refresh of the models (schema 0029): a sickness cut to one employed span, with what the Bradford factor makes of it"},
	{"model_sickness_working_days", "id", v1.Employment, "the sickness"},
	{"model_sickness_working_days", "lo", v1.Employment, "the piece's first day (days since 1900-01-01)"},
	{"model_sickness_working_days", "hi", v1.Employment, "its last"},
	{"model_sickness_working_days", "days", v1.Health, "its working days, excluded sickness types included (as model_bradford's days_raw)"},
	{"model_sickness_working_days", "counted", v1.Health, "whether the Bradford factor counts it: false for a sickness of an excluded type (pregnancy- or disability-related, say)"},
	{"model_sickness_working_days", "starts", v1.Health, "whether it starts a spell"},
	{"model_sickness_working_days", "join_lo", v1.Health, "the latest first day of the earlier sicknesses joining it into one spell"},

	{"model_bradford", "as_of", v1.Employment, "a view (it follows sicknesses): an employee's sickness spells and days over 52 weeks"},
	{"model_bradford", "employee_id", v1.Employment, ""},
	{"model_bradford", "department_id", v1.Employment, ""},
	{"model_bradford", "department", v1.Employment, ""},
	{"model_bradford", "spells", v1.Employment, ""},
	{"model_bradford", "days", v1.Employment, ""},
	{"model_bradford", "bradford", v1.Employment, "spells × spells × days"},
	{"model_bradford", "window_start", v1.Employment, "the window's first day (schema 0028)"},
	{"model_bradford", "spells_raw", v1.Health, "every sickness record a spell, excluded types included: beside the adjusted figures, it can tell that a sickness was of an excluded type (pregnancy- or disability-related, say)"},
	{"model_bradford", "days_raw", v1.Health, ""},
	{"model_bradford", "bradford_raw", v1.Health, ""},
	{"model_bradford", "band", v1.Employment, "the band the adjusted score falls in"},
	{"model_certificates_expiring", "employee_id", v1.Employment, "a view of training courses (it follows them): a current employee's certificate expiring within 90 days"},
	{"model_certificates_expiring", "course_id", v1.Employment, ""},
	{"model_certificates_expiring", "name", v1.Employment, "the course's name"},
	{"model_certificates_expiring", "training_type_id", v1.Employment, ""},
	{"model_certificates_expiring", "training_type", v1.Employment, "the training type's name"},
	{"model_certificates_expiring", "expires_on", v1.Employment, ""},
	{"model_certificates_expiring", "days_left", v1.Employment, ""},
	{"model_certificates_expiring", "window_days", v1.Employment, ""},

	{"model_reporting_lines", "employee_id", v1.Employment, "a view of employees (it follows them): each manager above a current employee"},
	{"model_reporting_lines", "manager_id", v1.Employment, ""},
	{"model_reporting_lines", "levels", v1.Employment, ""},
	{"model_reporting_lines", "path", v1.Employment, "the ids from the manager down to the employee"},

	{"model_management_tree", "manager_id", v1.Employment, "a view of employees (it follows them): a line manager, with counts of the people below them"},
	{"model_management_tree", "direct_reports", v1.Employment, ""},
	{"model_management_tree", "total_reports", v1.Employment, ""},
	{"model_management_tree", "depth", v1.Employment, ""},
	{"model_management_tree", "manager_left", v1.Employment, ""},
	{"model_management_tree", "in_cycle", v1.Employment, ""},
}, modelAggregateInventory()...)

// modelAggregates are the models that count people, with their columns: counts, never a person.
// A model kept as a table (RefreshedModels) has its derived view beside it, with the same columns.
var modelAggregates = []struct {
	view string
	cols []string
}{
	{"model_headcount_daily", []string{"day", "department_id", "department", "division_id", "division", "location_id", "location", "headcount", "fte", "zero_hours"}},
	{"model_headcount_monthly", []string{"month", "department_id", "department", "division_id", "division", "location_id", "location", "headcount", "fte", "zero_hours"}},
	{"model_starters_leavers_monthly", []string{"month", "department_id", "department", "starters", "leavers"}},
	{"model_turnover_monthly", []string{"month", "leavers", "headcount_start", "headcount_end", "average_headcount", "turnover", "leavers_12m", "average_headcount_12m", "turnover_12m"}},
	{"model_tenure_daily", []string{"day", "band", "headcount"}},
	{"model_absence_monthly", []string{"month", "department_id", "department", "sick_days", "other_leave_days", "holiday_days", "days_lost", "days_due", "fte", "days_lost_per_fte", "sickness_rate", "zero_hours_sick_days", "zero_hours_leave_days"}},
	{"model_training_completed_monthly", []string{"month", "department_id", "department", "training_type_id", "training_type", "courses_completed", "hours"}},
}

func modelAggregateInventory() []InventoryItem {
	var out []InventoryItem
	for _, m := range modelAggregates {
		views := []string{m.view}
		if slices.Contains(RefreshedModels, m.view) {
			views = append(views, m.view+"_derived")
		}
		for _, v := range views {
			for i, c := range m.cols {
				holds := ""
				switch {
				case i > 0:
				case v != m.view:
					holds = "a view: counts of people, never a person; what " + m.view + " is refreshed from"
				case len(views) > 1:
					holds = "a table refreshed after each sync: counts of people, never a person"
				default:
					holds = "a view: counts of people, never a person"
				}
				out = append(out, InventoryItem{v, c, v1.NotPersonal, holds})
			}
		}
	}
	return out
}

// ownTables are ownInventory without meta's totals, which follow its first five items.
var ownTables = []InventoryItem{
	{"schema_migrations", "version", v1.NotPersonal, "a migration applied"},
	{"schema_migrations", "name", v1.NotPersonal, ""},
	{"schema_migrations", "applied_at", v1.NotPersonal, ""},

	{"meta", "id", v1.NotPersonal, "the one row"},
	{"meta", "version", v1.NotPersonal, "the warehouse's version, raised by every write (serve's ETags)"},

	{"sync_runs", "id", v1.NotPersonal, ""},
	{"sync_runs", "run_id", v1.NotPersonal, ""},
	{"sync_runs", "account", v1.NotPersonal, "the account's name in the configuration"},
	{"sync_runs", "resource", v1.NotPersonal, "the collection walked"},
	{"sync_runs", "started_at", v1.NotPersonal, ""},
	{"sync_runs", "finished_at", v1.NotPersonal, ""},
	{"sync_runs", "status", v1.NotPersonal, ""},
	{"sync_runs", "pages", v1.NotPersonal, "counts of the walk and the merge"},
	{"sync_runs", "requests", v1.NotPersonal, ""},
	{"sync_runs", "retries", v1.NotPersonal, ""},
	{"sync_runs", "rate_limited", v1.NotPersonal, ""},
	{"sync_runs", "walks", v1.NotPersonal, ""},
	{"sync_runs", "total_reported", v1.NotPersonal, ""},
	{"sync_runs", "records_seen", v1.NotPersonal, ""},
	{"sync_runs", "distinct_records", v1.NotPersonal, ""},
	{"sync_runs", "inserted", v1.NotPersonal, ""},
	{"sync_runs", "updated", v1.NotPersonal, ""},
	{"sync_runs", "unchanged", v1.NotPersonal, ""},
	{"sync_runs", "deleted", v1.NotPersonal, ""},
	{"sync_runs", "deletions_refused", v1.NotPersonal, ""},
	{"sync_runs", "error", v1.NotPersonal, "why a run failed; errors never carry record values"},
	{"sync_runs", "window_from", v1.NotPersonal, ""},
	{"sync_runs", "window_to", v1.NotPersonal, ""},
	{"sync_runs", "accepted_by", v1.FreeText, "who accepted a held load, as they named themselves (hrsync sync --accept --by, else their login name)"},
	{"sync_runs", "accept_reason", v1.FreeText, "why a held load was accepted, as the operator wrote it"},

	{"load_profiles", "run", v1.NotPersonal, "a run's load profile: counts of records holding a value, never a value"},
	{"load_profiles", "column_name", v1.NotPersonal, ""},
	{"load_profiles", "records_before", v1.NotPersonal, ""},
	{"load_profiles", "filled_before", v1.NotPersonal, ""},
	{"load_profiles", "records_after", v1.NotPersonal, ""},
	{"load_profiles", "filled_after", v1.NotPersonal, ""},
	{"load_profiles", "distinct_after", v1.NotPersonal, ""},
	{"load_profiles", "distinct_capped", v1.NotPersonal, ""},
	{"load_profiles", "unlisted_before", v1.NotPersonal, ""},
	{"load_profiles", "unlisted_after", v1.NotPersonal, ""},

	{"load_holds", "run", v1.NotPersonal, "a load guard a run tripped: counts and column names, never a value"},
	{"load_holds", "guard", v1.NotPersonal, ""},
	{"load_holds", "message", v1.NotPersonal, ""},
	{"load_holds", "before_count", v1.NotPersonal, ""},
	{"load_holds", "before_of", v1.NotPersonal, ""},
	{"load_holds", "after_count", v1.NotPersonal, ""},
	{"load_holds", "after_of", v1.NotPersonal, ""},
	{"load_holds", "accepted", v1.NotPersonal, ""},

	{"onboarding_rows", "id", v1.NotPersonal, ""},
	{"onboarding_rows", "file_hash", v1.NotPersonal, "the SHA-256 of the file the row came from"},
	{"onboarding_rows", "file_name", v1.FreeText, "the file's name, as people named it"},
	{"onboarding_rows", "line", v1.NotPersonal, ""},
	{"onboarding_rows", "email", v1.Identifying, "the new hire's email, which makes a row's send exactly-once"},
	{"onboarding_rows", "status", v1.NotPersonal, "pending, created or refused"},
	{"onboarding_rows", "employee_id", v1.Employment, "the employee the source created"},
	{"onboarding_rows", "reason", v1.FreeText, "why the source refused the row"},
	{"onboarding_rows", "created_at", v1.NotPersonal, ""},
	{"onboarding_rows", "updated_at", v1.NotPersonal, ""},
	{"onboarding_rows", "request_hash", v1.Identifying, "the SHA-256 of the create sent (names, email, dates)"},

	{"idempotency_keys", "client", v1.NotPersonal, "the serve key's name"},
	{"idempotency_keys", "idem_key", v1.NotPersonal, "the Idempotency-Key the client sent"},
	{"idempotency_keys", "request_hash", v1.Identifying, "the SHA-256 of the create (names, email, dates)"},
	{"idempotency_keys", "status", v1.NotPersonal, ""},
	{"idempotency_keys", "body", v1.Identifying, "the answer to the create: the employee created (JSON)"},
	{"idempotency_keys", "location", v1.Employment, "the created employee's address"},
	{"idempotency_keys", "employee_id", v1.Employment, ""},
	{"idempotency_keys", "created_at", v1.NotPersonal, ""},

	{"events", "id", v1.NotPersonal, "a joiner, mover or leaver event (docs/events.md); erased with the person"},
	{"events", "seq", v1.NotPersonal, "its place in the feed, once published"},
	{"events", "employee_id", v1.Employment, "the person it is about"},
	{"events", "type", v1.Employment, "joined, moved, left…"},
	{"events", "effective_at", v1.Employment, "when it takes effect"},
	{"events", "recorded_at", v1.NotPersonal, ""},
	{"events", "run_id", v1.NotPersonal, "the sync run whose load derived it"},
	{"events", "state", v1.NotPersonal, "pending, held, published or withdrawn"},
	{"events", "held_by", v1.NotPersonal, "the run whose mass leaving the brake held"},
	{"events", "data", v1.Employment, "what changed, before and after (department, job title, line manager's id…), and the dates (JSON)"},
	{"event_state", "employee_id", v1.Employment, "each person as the events last told them: taken again from their row when erased"},
	{"event_state", "present", v1.Employment, ""},
	{"event_state", "status", v1.Employment, ""},
	{"event_state", "join_date", v1.Employment, ""},
	{"event_state", "leaving_date", v1.Employment, ""},
	{"event_state", "department_id", v1.Employment, ""},
	{"event_state", "division_id", v1.Employment, ""},
	{"event_state", "location_id", v1.Employment, ""},
	{"event_state", "line_manager_id", v1.Employment, ""},
	{"event_state", "job_title", v1.Employment, ""},
	{"event_state", "working_pattern_id", v1.Employment, ""},
	{"event_state", "left_at", v1.Employment, "when their leaving took effect"},
	{"event_subscribers", "name", v1.NotPersonal, "a webhook subscriber of events.webhooks"},
	{"event_subscribers", "after_seq", v1.NotPersonal, "the last event queued for it"},
	{"event_deliveries", "subscriber", v1.NotPersonal, "an event queued for a webhook subscriber, and its attempts: the delivery log; erased with the person"},
	{"event_deliveries", "event_id", v1.NotPersonal, ""},
	{"event_deliveries", "seq", v1.NotPersonal, ""},
	{"event_deliveries", "employee_id", v1.Employment, "the person the event is about"},
	{"event_deliveries", "state", v1.NotPersonal, "pending, delivered or dead"},
	{"event_deliveries", "attempts", v1.NotPersonal, ""},
	{"event_deliveries", "queued_at", v1.NotPersonal, ""},
	{"event_deliveries", "next_at", v1.NotPersonal, ""},
	{"event_deliveries", "last_status", v1.NotPersonal, "the receiver's last HTTP status"},
	{"event_deliveries", "last_error", v1.NotPersonal, "why the last attempt failed: never the body"},
	{"event_deliveries", "done_at", v1.NotPersonal, ""},
	{"event_baseline", "id", v1.NotPersonal, "the load that took the events' first state, which told nothing"},
	{"event_baseline", "taken_at", v1.NotPersonal, ""},
	{"event_baseline", "run_id", v1.NotPersonal, ""},

	{"request_budget", "account", v1.NotPersonal, "the source account whose requests are paced"},
	{"request_budget", "tat", v1.NotPersonal, "when its next request may go"},

	{"erasures", "id", v1.NotPersonal, "an erasure: what stays erased across syncs"},
	{"erasures", "kind", v1.NotPersonal, "employee (a person, everywhere) or record (one record)"},
	{"erasures", "collection", v1.NotPersonal, "the erased record's collection (employees for a person)"},
	{"erasures", "subject_id", v1.Employment, "the erased employee's or record's id at the source"},
	{"erasures", "classes", v1.NotPersonal, "the classes erased, comma-separated"},
	{"erasures", "cause", v1.NotPersonal, "request, or retention: the rule"},
	{"erasures", "reason", v1.FreeText, "why, as the operator wrote it"},
	{"erasures", "erased_at", v1.NotPersonal, ""},
	{"erasures", "lifted_at", v1.NotPersonal, "when it was lifted: the next sync brings the source's values back"},
	{"erasures", "lift_reason", v1.FreeText, "why it was lifted, as the operator wrote it"},

	{"erasure_log", "id", v1.NotPersonal, "the audit ledger of erasures: never an erased value"},
	{"erasure_log", "at", v1.NotPersonal, ""},
	{"erasure_log", "action", v1.NotPersonal, "erase, retention or lift"},
	{"erasure_log", "cause", v1.NotPersonal, "request, or retention: the rule"},
	{"erasure_log", "reason", v1.FreeText, "why, as the operator wrote it"},
	{"erasure_log", "subject", v1.Employment, "whose: employee 42, or a collection's record ids"},
	{"erasure_log", "classes", v1.NotPersonal, "the classes erased, comma-separated"},
	{"erasure_log", "rows", v1.NotPersonal, "the rows changed per table (JSON)"},
	{"erased_identities", "erasure_id", v1.NotPersonal, "the erasure of a person whose emails onboarding refuses until it is lifted"},
	{"erased_identities", "email_key", v1.Identifying, "a keyed fingerprint (HMAC-SHA256) of an email the erased person had: confirms a guess only with the secret, never read back; deleted with the lift"},
	{"erasure_secret", "id", v1.NotPersonal, "the one row"},
	{"erasure_secret", "secret", v1.NotPersonal, "the fingerprints' key: 32 random bytes, never exported or logged"},
	{"locks", "name", v1.NotPersonal, "a named lock (sync, onboarding), held as a lease"},
	{"locks", "holder", v1.NotPersonal, "the host and process id that took it"},
	{"locks", "token", v1.NotPersonal, "raised at every take: which holding it is"},
	{"locks", "taken_at", v1.NotPersonal, ""},
	{"locks", "expires_at", v1.NotPersonal, "when it is free unless renewed"},
}

// ErasedWithEmployee reports whether erasing an employee (EraseEmployee, EraseEmployees) reaches
// the column of table: the columns of an erasable class of their employees row and of their
// events' tables (a collection with an employee reference), every version included; the answers
// kept for their creates and their requests' hashes (idempotency_keys.body, request_hash); their
// onboarding rows' email, request hash and reason. The file name of an onboarding row, the erasures' and the log's reasons, and the
// reference data's tables are not theirs, and are not reached.
func ErasedWithEmployee(table, column string) bool {
	switch table {
	case "idempotency_keys":
		return column == "body" || column == "request_hash"
	case "onboarding_rows":
		return column == "email" || column == "request_hash" || column == "reason"
	}
	name := strings.TrimSuffix(table, "_history")
	t := tableOf(name)
	if t == nil {
		return false
	}
	if name == string(Employees) {
		return true
	}
	for _, r := range t.refs {
		if r.target == string(Employees) && r.field == "employee" {
			return true
		}
	}
	return false
}
