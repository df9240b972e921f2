// Package retention is hrsync's retention job: past the periods an operator configures, the
// personal data of leavers (by class), the details of old sicknesses and old onboarding files
// are erased from the warehouse, history included (sink's erasure), on a schedule after the
// syncs, and the runs are recorded in the warehouse's erasure log.
package retention

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A Period is how long something is kept: years, months and days, added to a date as calendar
// units (6y after 2020-02-29 is 2026-03-01, as time.AddDate counts). The zero Period is none:
// kept for ever.
type Period struct {
	Years, Months, Days int
}

// ParsePeriod reads a period written as a number and a unit, or several: "6y", "18m", "90d",
// "2w", "1y6m"; y, m, w, d for years, months, weeks, days; whitespace between them is allowed.
// "" is the zero Period. An ISO 8601 duration of those units (P6Y, P1Y6M, P90D) is read too.
func ParsePeriod(s string) (Period, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	if in == "" {
		return Period{}, nil
	}
	iso := strings.HasPrefix(in, "p")
	in = strings.TrimPrefix(in, "p")
	var p Period
	seen := map[byte]bool{}
	for rest := in; rest != ""; {
		rest = strings.TrimLeft(rest, " ")
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) {
			return Period{}, periodError(s)
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || i > 6 {
			return Period{}, fmt.Errorf("period %q: %s is too long a period", s, rest[:i])
		}
		unit := rest[i]
		if seen[unit] {
			return Period{}, periodError(s)
		}
		seen[unit] = true
		switch unit {
		case 'y':
			p.Years = n
		case 'm':
			p.Months = n
		case 'w':
			p.Days += 7 * n
		case 'd':
			p.Days += n
		default:
			return Period{}, periodError(s)
		}
		rest = rest[i+1:]
	}
	if iso && in == "" {
		return Period{}, periodError(s)
	}
	if p.Years > 1000 || p.Months > 12000 || p.Days > 365000 {
		return Period{}, fmt.Errorf("period %q is too long a period (at most 1000 years)", s)
	}
	if p.IsZero() {
		return Period{}, fmt.Errorf("period %q is nothing: leave it empty to keep for ever", s)
	}
	return p, nil
}

func periodError(s string) error {
	return fmt.Errorf("period %q: want a number and a unit (y, m, w, d), e.g. 6y, 18m, 90d or 1y6m", s)
}

// IsZero reports whether p is none: kept for ever.
func (p Period) IsZero() bool { return p == Period{} }

// From is the moment p after t.
func (p Period) From(t time.Time) time.Time { return t.AddDate(p.Years, p.Months, p.Days) }

// String writes p as ParsePeriod reads it: "6y", "1y6m", "90d"; "" for none.
func (p Period) String() string {
	var b strings.Builder
	for _, u := range []struct {
		n    int
		unit string
	}{{p.Years, "y"}, {p.Months, "m"}, {p.Days, "d"}} {
		if u.n != 0 {
			b.WriteString(strconv.Itoa(u.n) + u.unit)
		}
	}
	return b.String()
}
