package main

import (
	"reflect"
	"testing"
)

func TestParseUnavailable(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]int
		wantErr bool
	}{
		{"", nil, false},
		{"employee_training_courses=404", map[string]int{"employee_training_courses": 404}, false},
		{"sicknesses=403, absences=404", map[string]int{"sicknesses": 403, "absences": 404}, false},
		{"employees=403", map[string]int{"employees": 403}, false},
		{"sicknesses=500", nil, true},
		{"sicknesses", nil, true},
		{"salaries=404", map[string]int{"salaries": 404}, false},
		{"payslips=404", nil, true},
		{"absences=40x", nil, true},
	}
	for _, tt := range tests {
		got, err := parseUnavailable(tt.in)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseUnavailable(%q) = %v, %v", tt.in, got, err)
		}
	}
}
