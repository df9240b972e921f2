package onboard

import (
	"testing"

	"github.com/hrsync/hrsync/source/v1"
)

// TestTaken: a refusal counts as "email in use" only when a reason of an email field says taken
// or exists, in any case.
func TestTaken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		problems []v1.FieldProblem
		want     bool
	}{
		{[]v1.FieldProblem{{Field: "employee[email]", Reasons: []string{"is invalid", "has already been taken"}}}, true},
		{[]v1.FieldProblem{{Field: "email", Reasons: []string{"Already EXISTS"}}}, true},
		{[]v1.FieldProblem{{Field: "employee[last_name]", Reasons: []string{"is taken"}}, {Field: "employee[email]", Reasons: []string{"is invalid"}}}, false},
		{nil, false},
	} {
		if got := taken(&v1.ValidationError{Problems: c.problems}); got != c.want {
			t.Errorf("taken(%v) = %v, want %v", c.problems, got, c.want)
		}
	}
}
