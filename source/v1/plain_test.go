package v1

import (
	"reflect"
	"slices"
	"testing"
)

// TestPlainFieldsCoverTheRecords: every field of Employee and WorkingPattern is either declared
// (EmployeeFields, PatternFields: decoded, written and warehoused from the declaration) or one of
// the few written by hand (the id, the references, Extra, Sent), so a field added to the type
// without its declaration line fails here, not as a value silently never stored.
func TestPlainFieldsCoverTheRecords(t *testing.T) {
	check(t, EmployeeFields, []string{"ID", "WorkingPattern", "HolidayAllowance", "LineManager", "HolidayApprover",
		"Department", "Division", "Location", "Extra", "Sent"})
	check(t, PatternFields, []string{"ID", "Extra", "Sent"})
	if got := EmployeeFields[EmployeeFieldsBefore-1].Name; got != "notice_period" {
		t.Errorf("the last field before the references is %s, want notice_period (the seed's order)", got)
	}
}

func check[T any](t *testing.T, fields []Plain[T], byHand []string) {
	t.Helper()
	var rec T
	// covered counts the declared fields at each address within rec.
	covered := map[uintptr]int{}
	for _, f := range fields {
		var p any
		switch {
		case f.Text != nil:
			p = f.Text(&rec)
		case f.Int != nil:
			p = f.Int(&rec)
		case f.Bool != nil:
			p = f.Bool(&rec)
		case f.Raw != nil:
			p = f.Raw(&rec)
		default:
			t.Errorf("%s: no accessor", f.Name)
			continue
		}
		covered[reflect.ValueOf(p).Pointer()]++
	}
	v := reflect.ValueOf(&rec).Elem()
	for i := range v.NumField() {
		name, fv := v.Type().Field(i).Name, v.Field(i)
		n := covered[fv.Addr().Pointer()]
		if fv.Kind() == reflect.Array {
			// an array of values (a pattern's days): each element declared once
			n = 0
			for j := range fv.Len() {
				n += min(covered[fv.Index(j).Addr().Pointer()], 1)
			}
			if n == fv.Len() {
				continue
			}
		}
		switch {
		case slices.Contains(byHand, name) && n > 0:
			t.Errorf("%s.%s: written by hand and declared", v.Type().Name(), name)
		case !slices.Contains(byHand, name) && n != 1:
			t.Errorf("%s.%s: declared %d times, want once (a line in the declarations)", v.Type().Name(), name, n)
		}
	}
}
