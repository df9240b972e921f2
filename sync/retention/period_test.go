package retention

import (
	"strings"
	"testing"
	"time"
)

func TestParsePeriod(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Period
		err  string
	}{
		{"", Period{}, ""},
		{"6y", Period{Years: 6}, ""},
		{" 18M ", Period{Months: 18}, ""},
		{"90d", Period{Days: 90}, ""},
		{"2w", Period{Days: 14}, ""},
		{"1y6m", Period{Years: 1, Months: 6}, ""},
		{"1y 6m 2w 1d", Period{Years: 1, Months: 6, Days: 15}, ""},
		{"P6Y", Period{Years: 6}, ""},
		{"p1y6m", Period{Years: 1, Months: 6}, ""},
		{"6", Period{}, "want a number and a unit"},
		{"y", Period{}, "want a number and a unit"},
		{"6 years", Period{}, "want a number and a unit"},
		{"6y6y", Period{}, "want a number and a unit"},
		{"-6y", Period{}, "want a number and a unit"},
		{"P", Period{}, "want a number and a unit"},
		{"PT6H", Period{}, "want a number and a unit"},
		{"0d", Period{}, "is nothing: leave it empty"},
		{"5000y", Period{}, "too long a period"},
		{"99999999999999999999d", Period{}, "too long a period"},
		{"1000w", Period{Days: 7000}, ""},
	} {
		got, err := ParsePeriod(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParsePeriod(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParsePeriod(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.err)
		}
	}
}

func TestPeriodFrom(t *testing.T) {
	leap := time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)
	if got := (Period{Years: 6}).From(leap); !got.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("6y after 2020-02-29 = %v", got)
	}
	if got := (Period{Days: 90}).From(leap); !got.Equal(time.Date(2020, 5, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("90d after 2020-02-29 = %v", got)
	}
}

// FuzzParsePeriod: any text is a period or an error naming it, never a panic; a period read
// back from its String is itself.
func FuzzParsePeriod(f *testing.F) {
	for _, s := range []string{"6y", "1y6m", "P90D", "", "12", "3w2d", "1000y1000m1000d", "1000w", "52000w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePeriod(s)
		if err != nil {
			return
		}
		if p.Years < 0 || p.Months < 0 || p.Days < 0 {
			t.Fatalf("ParsePeriod(%q) = %+v: negative", s, p)
		}
		back, err := ParsePeriod(p.String())
		if err != nil || back != p {
			t.Fatalf("ParsePeriod(%q) = %+v; its String %q reads back as %+v, %v", s, p, p.String(), back, err)
		}
	})
}
