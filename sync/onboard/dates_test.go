package onboard_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestParseJoinDateAccepts: every form a join date is read in, by default (day first, as UK
// and European Excel writes dates) and under a configured layout.
func TestParseJoinDateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, layout, want string
	}{
		// ISO, always.
		{"2026-12-25", "", "2026-12-25"},
		{"2026/12/25", "", "2026-12-25"},
		{"2026/12/25", "01/02/2006", "2026-12-25"},
		{"2025/04/03", "2006/02/01", "2025-04-03"}, // YYYY/MM/DD wins over a layout that could also read it
		// Day first: Excel UK (25/12/2026, 25/12/26), Germany (25.12.2026), dashes.
		{"25/12/2026", "", "2026-12-25"},
		{"25/12/26", "", "2026-12-25"},
		{"25.12.2026", "", "2026-12-25"},
		{"25.12.26", "", "2026-12-25"},
		{"25-12-2026", "", "2026-12-25"},
		{"5/1/2026", "", "2026-01-05"},
		{"05/01/2026", "", "2026-01-05"},
		{"03/04/2026", "", "2026-04-03"}, // both orders make a date: the file's order (day first)
		{"04/04/2026", "", "2026-04-04"},
		{"29/02/2028", "", "2028-02-29"},
		{"01/01/00", "", "2000-01-01"},
		{"31/12/99", "", "2099-12-31"}, // two-digit years are 20xx
		// The month's name, in either place.
		{"25-Dec-2026", "", "2026-12-25"},
		{"25-Dec-26", "", "2026-12-25"},
		{"25 Dec 2026", "", "2026-12-25"},
		{"25 December 2026", "", "2026-12-25"},
		{"25 DECEMBER 2026", "", "2026-12-25"},
		{"25th December 2026", "", "2026-12-25"},
		{"1st Sept 2026", "", "2026-09-01"},
		{"Dec 25, 2026", "", "2026-12-25"},
		{"December 25 2026", "", "2026-12-25"},
		{"25 Dec 2026", "01/02/2006", "2026-12-25"},
		// Month first, configured (US files); any separator, leading zeros or not.
		{"12/25/2026", "01/02/2006", "2026-12-25"},
		{"1/5/2026", "01/02/2006", "2026-01-05"},
		{"03/04/2026", "01/02/2006", "2026-03-04"},
		{"12-25-26", "01/02/2006", "2026-12-25"},
		{"12/25/26", "1/2/06", "2026-12-25"},
		// Day first, configured: as the default.
		{"01.04.2025", "02.01.2006", "2025-04-01"},
		{"25/12/2026", "02.01.2006", "2026-12-25"},
		// A layout without a day-month order is one more form, read before the numbers.
		{"20261225", "20060102", "2026-12-25"},
		{"26/12/25", "06/01/02", "2026-12-25"},
		{"2026.12.25", "2006.01.02", "2026-12-25"},
		{"2026.1.5", "2006.01.02", "2026-01-05"},
		{"25/12/2026", "20060102", "2026-12-25"},
		{"25/12/70", "02/01/06", "2070-12-25"}, // 20xx, even where Go would say 1970
	}
	for _, tt := range tests {
		got, err := onboard.ParseJoinDate(tt.in, tt.layout)
		if err != nil || got != tt.want {
			t.Errorf("ParseJoinDate(%q, %q) = %q, %v; want %q", tt.in, tt.layout, got, err, tt.want)
		}
	}
}

// TestParseJoinDateRejects: every rejection names the value and what would accept it.
func TestParseJoinDateRejects(t *testing.T) {
	t.Parallel()
	const monthFirstHint = "if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006"
	tests := []struct {
		in, layout string
		want       []string // in the reason, in order
	}{
		{"12/25/2026", "", []string{`"12/25/2026" is not a date read day first`, monthFirstHint}},
		{"07/20/2026", "", []string{`"07/20/2026" is not a date read day first`, monthFirstHint}},
		{"12.25.26", "", []string{`"12.25.26" is not a date read day first`, monthFirstHint}},
		{"25/12/2026", "01/02/2006", []string{`"25/12/2026" is not a date read month first (onboarding.date_layout: 01/02/2006)`,
			"read day first it is 25 Dec 2026", "leave onboarding.date_layout empty"}},
		{"31/04/2026", "", []string{`"31/04/2026" is not a calendar date, read day first or month first`}},
		{"29/02/2027", "", []string{`"29/02/2027" is not a calendar date`}},
		{"2025-02-29", "", []string{`"2025-02-29" is not a calendar date`}},
		{"2025/13/01", "", []string{`"2025/13/01" is not a calendar date`}},
		{"0000-01-01", "", []string{`"0000-01-01" is not a calendar date`}},
		{"31 Apr 2026", "", []string{`"31 Apr 2026" is not a calendar date`}},
		{"2025-3-4", "", []string{`"2025-3-4" is not a date: write it as YYYY-MM-DD`, "onboarding.date_layout: 01/02/2006"}},
		{"2025-03/04", "", []string{`"2025-03/04" is not a date`}},
		{"25/12/026", "", []string{`"25/12/026" is not a date`}},
		{"2025-03-04 00:00:00", "", []string{`"2025-03-04 00:00:00" is not a date`}},
		{"next Monday", "", []string{`"next Monday" is not a date: write it as YYYY-MM-DD, day first (25/12/2026, 25.12.26) or with the month's name (25 Dec 2026); for month-first dates (12/25/2026) set onboarding.date_layout: 01/02/2006`}},
		{"45720", "", []string{`"45720" is an Excel date serial number`, "format the column as a date"}},
		{"Dec 2026", "", []string{`"Dec 2026" is not a date`}},
		{"Decimber 25 2026", "", []string{`is not a date`}},
		{"2026.12.25", "20060102", []string{`"2026.12.25" is not a date`, "as onboarding.date_layout (20060102) says (20250131)"}},
		{"soon", "01/02/2006", []string{`"soon" is not a date: write it as YYYY-MM-DD, month first as onboarding.date_layout (01/02/2006) says (01/31/2025)`}},
		// Values are shown cut short, and with what is not printable escaped.
		{strings.Repeat("9", 60), "", []string{`"` + strings.Repeat("9", 40) + `…" is not a date`}},
		{"25/12\x1b[2J/2026", "", []string{`"25/12\x1b[2J/2026" is not a date`}},
		{"", "", []string{"missing"}},
	}
	for _, tt := range tests {
		got, err := onboard.ParseJoinDate(tt.in, tt.layout)
		if err == nil {
			t.Errorf("ParseJoinDate(%q, %q) = %q, want an error", tt.in, tt.layout, got)
			continue
		}
		msg, at := err.Error(), 0
		for _, w := range tt.want {
			i := strings.Index(msg[at:], w)
			if i < 0 {
				t.Errorf("ParseJoinDate(%q, %q): %q lacks %q", tt.in, tt.layout, msg, w)
				break
			}
			at += i + len(w)
		}
		if strings.ContainsAny(msg, "\r\n\x1b") {
			t.Errorf("ParseJoinDate(%q): %q is not one printable line", tt.in, msg)
		}
	}
}

// TestReadHiresDatesAsAFileSaysThem: numbers that make a date in both orders are read in the
// file's order, unless another row's date can only be read in the other order: then they are
// ambiguous, and rejected, saying what settles it.
func TestReadHiresDatesAsAFileSaysThem(t *testing.T) {
	t.Parallel()
	const header = "First name,Last name,Email,Join date\n"
	tests := []struct {
		name   string
		layout string
		rows   string
		want   []string // join dates of the rows, "" for rejected
		reason map[int][]string
	}{{
		name: "a UK export",
		rows: "Ann,Lee,ann@example.com,25/12/2026\nBo,Ek,bo@example.com,03/04/2026\nCy,Ng,cy@example.com,5.1.27\n",
		want: []string{"2026-12-25", "2026-04-03", "2027-01-05"},
	}, {
		name: "a US export under the day-first default",
		rows: "Ann,Lee,ann@example.com,12/25/2026\nBo,Ek,bo@example.com,03/04/2026\nCy,Ng,cy@example.com,2026-05-01\nDi,Oz,di@example.com,04/04/2026\n",
		want: []string{"", "", "2026-05-01", "2026-04-04"},
		reason: map[int][]string{
			2: {`join_date: "12/25/2026" is not a date read day first`, "onboarding.date_layout: 01/02/2006"},
			3: {`join_date: "03/04/2026" is ambiguous in this file: read day first it is 3 Apr 2026, month first 4 Mar 2026, and line 2's "12/25/2026" can only be month first`,
				"if the file's dates are month first, set onboarding.date_layout: 01/02/2006, or correct line 2"},
		},
	}, {
		name:   "the same US export, month first configured",
		layout: "01/02/2006",
		rows:   "Ann,Lee,ann@example.com,12/25/2026\nBo,Ek,bo@example.com,03/04/2026\nCy,Ng,cy@example.com,2026-05-01\nDi,Oz,di@example.com,04/04/2026\n",
		want:   []string{"2026-12-25", "2026-03-04", "2026-05-01", "2026-04-04"},
	}, {
		name:   "a UK export, month first configured",
		layout: "01/02/2006",
		rows:   "Ann,Lee,ann@example.com,03/04/2026\nBo,Ek,bo@example.com,25/12/2026\n",
		want:   []string{"", ""},
		reason: map[int][]string{
			2: {`join_date: "03/04/2026" is ambiguous in this file: read month first (onboarding.date_layout: 01/02/2006) it is 4 Mar 2026, day first 3 Apr 2026, and line 3's "25/12/2026" can only be day first`,
				"leave onboarding.date_layout empty, or correct line 3"},
			3: {`join_date: "25/12/2026" is not a date read month first`},
		},
	}, {
		name: "dates in both orders",
		rows: "Ann,Lee,ann@example.com,25/12/2026\nBo,Ek,bo@example.com,03/04/2026\nCy,Ng,cy@example.com,12/31/2026\n",
		want: []string{"2026-12-25", "", ""},
		reason: map[int][]string{
			3: {`join_date: "03/04/2026" is ambiguous in this file, which has dates in both orders: read day first it is 3 Apr 2026, month first 4 Mar 2026 (line 4's "12/31/2026" can only be month first, line 2's "25/12/2026" only day first); write the file's dates one way, or as YYYY-MM-DD`},
		},
	}, {
		name: "an ambiguous row rejected for more keeps its own reasons",
		rows: "Ann,,ann@example.com,03/04/2026\nBo,Ek,bo@example.com,12/25/2026\n",
		want: []string{"", ""},
		reason: map[int][]string{
			2: {"last_name: missing"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := onboard.ReadHireFile(strings.NewReader(header+tt.rows), onboard.HireOptions{DateLayout: tt.layout})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(tt.want))
			for _, h := range f.Hires {
				got[h.Line-2] = h.Employee.JoinDate
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("join dates %q, want %q (problems %+v)", got, tt.want, f.Problems)
			}
			if len(f.Hires)+len(f.Problems) != len(tt.want) {
				t.Errorf("%d hires and %d problems for %d rows", len(f.Hires), len(f.Problems), len(tt.want))
			}
			for i, p := range f.Problems {
				if i > 0 && f.Problems[i-1].Line >= p.Line {
					t.Errorf("problems out of line order: %+v", f.Problems)
				}
				if p.FirstName == "" || p.Email == "" {
					t.Errorf("line %d: the problem lacks the person: %+v", p.Line, p)
				}
				msg, at := p.Reason, 0
				for _, w := range tt.reason[p.Line] {
					j := strings.Index(msg[at:], w)
					if j < 0 {
						t.Errorf("line %d: reason %q lacks %q", p.Line, msg, w)
						break
					}
					at += j + len(w)
				}
			}
		})
	}
}
