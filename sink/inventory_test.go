package sink_test

import (
	"context"
	"testing"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestInventoryIsTheWarehouse: every column of every table the migrations make is in the data
// inventory, with a class, and the inventory names no column the warehouse does not have.
func TestInventoryIsTheWarehouse(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		bad, err := sink.InventoryMismatches(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	})
	for _, it := range sink.Inventory() {
		if !it.Class.Valid() {
			t.Errorf("%s.%s: no personal-data class", it.Table, it.Column)
		}
	}
}

// TestInventoryClasses holds the classes a data protection officer asks about first to what the
// declarations say, at every depth they reach the warehouse.
func TestInventoryClasses(t *testing.T) {
	t.Parallel()
	got := map[string]v1.Class{}
	for _, it := range sink.Inventory() {
		got[it.Table+"."+it.Column] = it.Class
	}
	for col, want := range map[string]v1.Class{
		"employees.first_name":                       v1.Identifying,
		"employees.email":                            v1.Identifying,
		"employees.age":                              v1.Identifying,
		"employees_history.last_name":                v1.Identifying,
		"employees.extra":                            v1.Identifying, // unknown members: identifying
		"employees.nested":                           v1.Identifying, // a line manager's name
		"employees.sent":                             v1.Identifying,
		"employees.department_id":                    v1.Employment,
		"employees.line_manager_id":                  v1.Employment,
		"employees.job_title":                        v1.Employment,
		"employees.company_join_date":                v1.Employment,
		"employees.deleted_at":                       v1.Employment,
		"departments.name":                           v1.NotPersonal,
		"working_patterns.total_hours":               v1.NotPersonal,
		"sicknesses.reason":                          v1.Health,
		"sicknesses.review_notes":                    v1.Health,
		"sicknesses.fit_note_required":               v1.Health,
		"sicknesses.company_sicknesstype_id":         v1.Health,
		"sicknesses_history.reason":                  v1.Health,
		"sicknesses.extra":                           v1.Health,
		"sicknesses.sent":                            v1.Health,
		"sicknesses.nested":                          v1.Health, // the sickness type's name
		"sicknesses.start_date":                      v1.Employment,
		"sicknesses.deducted":                        v1.Employment,
		"absences.notes":                             v1.FreeText,
		"absences.nested":                            v1.Identifying, // the employee's and approver's names
		"absences.employee_id":                       v1.Employment,
		"leave_requests.notes":                       v1.FreeText,
		"employee_training_courses.rejection_reason": v1.FreeText,
		"salaries.extra":                             v1.Financial,
		"salaries.sent":                              v1.Financial,
		"salaries.employee_id":                       v1.Employment,
		"onboarding_rows.email":                      v1.Identifying,
		"idempotency_keys.body":                      v1.Identifying,
		"sync_runs.error":                            v1.NotPersonal,
	} {
		if got[col] != want {
			t.Errorf("%s: class %v, want %v", col, got[col], want)
		}
	}
}
