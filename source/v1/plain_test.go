package v1

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"
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
	base := uintptr(unsafe.Pointer(&rec))
	// covered counts the declared fields at each offset of the struct.
	covered := map[uintptr]int{}
	for _, f := range fields {
		var p unsafe.Pointer
		switch {
		case f.Text != nil:
			p = unsafe.Pointer(f.Text(&rec))
		case f.Int != nil:
			p = unsafe.Pointer(f.Int(&rec))
		case f.Bool != nil:
			p = unsafe.Pointer(f.Bool(&rec))
		case f.Raw != nil:
			p = unsafe.Pointer(f.Raw(&rec))
		default:
			t.Errorf("%s: no accessor", f.Name)
			continue
		}
		covered[uintptr(p)-base]++
	}
	typ := reflect.TypeFor[T]()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		n := covered[sf.Offset]
		if sf.Type.Kind() == reflect.Array {
			// an array of values (a pattern's days): each element declared
			n = 0
			for j := range sf.Type.Len() {
				n += min(covered[sf.Offset+uintptr(j)*sf.Type.Elem().Size()], 1)
			}
			if n == sf.Type.Len() {
				continue
			}
		}
		switch {
		case slices.Contains(byHand, sf.Name) && n > 0:
			t.Errorf("%s.%s: written by hand and declared", typ.Name(), sf.Name)
		case !slices.Contains(byHand, sf.Name) && n != 1:
			t.Errorf("%s.%s: declared %d times, want once (a line in the declarations)", typ.Name(), sf.Name, n)
		}
	}
}
