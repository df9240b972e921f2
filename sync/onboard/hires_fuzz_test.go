package onboard_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
)

// Run one at a time, e.g.
//   go test -run '^$' -fuzz '^FuzzReadHires$' -fuzztime 60s ./sync/onboard/
// A crasher lands in testdata/fuzz/<target>/, which go test runs from then on: keep it there.

// hireSeeds are the sample files, as seeds.
func hireSeeds(f *testing.F) [][]byte {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "hires", "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	if len(names) < 4 {
		f.Fatalf("%d sample files in testdata/hires, want 4 or more", len(names))
	}
	var seeds [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

var (
	isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	// ambiguousAt is an ambiguous join date's reason, naming the line that makes it so.
	ambiguousAt = regexp.MustCompile(`is ambiguous in this file.* line (\d+)'s "(?:[^"\\]|\\.)*" can only be`)
)

// fuzzLayouts are the date layouts the fuzz targets read under: none, day first, month first,
// and one without a day-month order.
var fuzzLayouts = []string{"", "02/01/2006", "01/02/2006", "20060102"}

// physicalLines counts the lines of a file as the reader does: CRLF, LF and a lone CR end one.
func physicalLines(b []byte) int {
	return bytes.Count(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n")) +
		bytes.Count(bytes.ReplaceAll(b, []byte("\r\n"), nil), []byte("\r")) + 1
}

func FuzzReadHires(f *testing.F) {
	for _, s := range hireSeeds(f) {
		for i := range fuzzLayouts {
			f.Add(s, uint8(i))
		}
	}
	for _, s := range []string{
		"", "\ufeff", "\xff\xfe", "sep=;\n", "sep=;", "First name,Last name,Email,Join date\n",
		"First name,Last name,Email,Join date\nA,B,a@b.co,2025-01-01\na,b,A@B.CO,2025-01-01\n",
		"first_name;last_name;email;join_date\r\"x\r\ny\";b;c@d.ee;01/02/2025\r",
		"First name\tLast name\tEmail\tJoin date\n\tB\ta@b.co\t2025-1-1\n",
		"First name,Last name,Email,Join date\n\"A\"B,\"\n",
		"First name,Last name,Email,Join date\nA,B,a@b.co,03/04/2026\nC,D,c@d.co,12/25/2026\nE,F,e@f.co,25 Dec 26\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, layout uint8) {
		opts := onboard.HireOptions{MaxRows: 1000} // reached by inputs of a few KiB: the limit is fuzzed too
		opts.DateLayout = fuzzLayouts[int(layout)%len(fuzzLayouts)]
		hires, problems, err := onboard.ReadHires(bytes.NewReader(data), opts)
		if err != nil {
			if hires != nil || problems != nil {
				t.Fatalf("error %v with hires %v and problems %v", err, hires, problems)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q is not one line", msg)
			}
			return
		}
		last := physicalLines(data)
		lines := make(map[int]string)
		prev := 0
		for _, h := range hires {
			if h.Line < 2 || h.Line > last || h.Line <= prev {
				t.Fatalf("hire on line %d (after %d, file of %d lines)", h.Line, prev, last)
			}
			prev = h.Line
			lines[h.Line] = "hire"
			e := h.Employee
			fields := map[string]string{"first_name": e.FirstName, "last_name": e.LastName, "email": e.Email, "job_title": e.JobTitle, "join_date": e.JoinDate}
			again, err := v1.ValidateNewEmployee(fields)
			if err != nil || again != e {
				t.Fatalf("hire on line %d %+v is not valid: %v (%+v)", h.Line, e, err, again)
			}
			if !isoDate.MatchString(e.JoinDate) {
				t.Fatalf("hire on line %d: join date %q is not YYYY-MM-DD", h.Line, e.JoinDate)
			}
		}
		for i, a := range hires {
			for _, b := range hires[:i] {
				if strings.EqualFold(a.Employee.Email, b.Employee.Email) {
					t.Fatalf("hires on lines %d and %d share an email", b.Line, a.Line)
				}
			}
		}
		prev = 0
		for _, p := range problems {
			if p.Line < 2 || p.Line > last || p.Line <= prev {
				t.Fatalf("problem on line %d (after %d, file of %d lines)", p.Line, prev, last)
			}
			prev = p.Line
			if lines[p.Line] != "" {
				t.Fatalf("line %d is both a hire and a problem", p.Line)
			}
			lines[p.Line] = "problem"
			if p.Reason == "" || strings.ContainsAny(p.Reason, "\r\n") || !utf8.ValidString(p.Reason) {
				t.Fatalf("line %d: reason %q is not one line", p.Line, p.Reason)
			}
			if onboard.SafeCell(p.Email) != p.Email {
				t.Fatalf("line %d: email %q is not safe", p.Line, p.Email)
			}
			for _, name := range []string{p.FirstName, p.LastName} {
				if strings.ContainsFunc(name, unicode.IsControl) || !utf8.ValidString(name) || len(name) > 100+len("…") {
					t.Fatalf("line %d: name %q is not one short line of text", p.Line, name)
				}
			}
			if p.Duplicate {
				var first int
				if _, err := fmt.Sscanf(p.Reason, "email: used again (first on line %d)", &first); err != nil || first < 2 || first >= p.Line || lines[first] == "" {
					t.Fatalf("line %d: duplicate %q does not name an earlier row", p.Line, p.Reason)
				}
			}
		}
		// An ambiguous date names a row whose date can only be read in the other order: rejected.
		for _, p := range problems {
			if m := ambiguousAt.FindStringSubmatch(p.Reason); m != nil {
				if at, _ := strconv.Atoi(m[1]); lines[at] != "problem" || at == p.Line {
					t.Fatalf("line %d: %q names line %d, which is not another rejected row", p.Line, p.Reason, at)
				}
			}
		}
	})
}

// FuzzHiresRoundTrip writes a row the way a spreadsheet does (any separator, line end, BOM,
// quoting), after a row with a note that may span lines, and checks it reads back as the
// validator sees it, on the right line.
func FuzzHiresRoundTrip(f *testing.F) {
	f.Add("Zoë", "Ødegård", "zoe@example.com", "Designer", "2025/03/03", "a\nnote", byte(','), "\r\n", true)
	f.Add("John", "Smith, Jr.", "JOHN@example.com", `Head of "Sales"`, "2025-03-10", "", byte(';'), "\n", false)
	f.Add(" Ana ", "", "ana@", "", "03/04/2025", "x\r\ny\rz", byte('\t'), "\r", false)
	f.Add("", "", "", "", "", "", byte(','), "\n", false)
	f.Add("=1+1", "-2", "anchor@example.COM", "@x", "2025-02-30", "\"", byte(','), "\n", true)
	// Found by this target: a lone CR inside a quoted cell of an LF file was read as a line end.
	f.Add("0", "0", "0\r0", "0", "0", "0", byte(0xA1), "0", false)
	f.Fuzz(func(t *testing.T, first, last, email, title, date, note string, sep byte, eol string, bom bool) {
		comma := rune(sep)
		switch sep {
		case ',', ';', '\t':
		default:
			comma = ','
		}
		if eol != "\r\n" && eol != "\r" {
			eol = "\n"
		}
		var b bytes.Buffer
		if bom {
			b.WriteString("\ufeff")
		}
		w := csv.NewWriter(&b)
		w.Comma = comma
		const anchor = "anchor@example.com"
		row := []string{first, last, email, title, date, ""}
		for _, rec := range [][]string{
			{"First name", "Last name", "Email", "Job title", "Join date", "Notes"},
			{"Ada", "Lovelace", anchor, "", "2025-01-06", note},
			row,
		} {
			if err := w.Write(rec); err != nil {
				t.Skip(err)
			}
		}
		w.Flush()
		data := b.Bytes()
		if eol != "\n" {
			data = bytes.ReplaceAll(data, []byte("\n"), []byte(eol))
		}
		hires, problems, err := onboard.ReadHires(bytes.NewReader(data), onboard.HireOptions{})

		text := true
		for _, c := range append(row, note) {
			text = text && utf8.ValidString(c) && !strings.ContainsRune(c, 0)
		}
		if !text {
			if err == nil {
				t.Fatalf("not text, but no error: %v %v", hires, problems)
			}
			return
		}
		if err != nil {
			t.Fatalf("ReadHires(%q): %v", data, err)
		}
		if len(hires) == 0 || hires[0].Line != 2 || hires[0].Employee.Email != anchor {
			t.Fatalf("the anchor row: hires %v problems %v", hires, problems)
		}
		// What the cells read back as: in a file of lone CR line ends every CR is a line end, so a
		// line break in a cell is an LF; otherwise the CSV reader drops the CR of a CRLF that ends
		// a line (written in a cell as "\r\n", or as "\r" followed by a line break written as LF).
		readBack := func(c string) string {
			switch eol {
			case "\r":
				return strings.ReplaceAll(c, "\r", "\n")
			case "\n":
				return strings.ReplaceAll(c, "\r\n", "\n")
			}
			return c
		}
		// The row starts after the anchor's lines, however many its note spans as written.
		line := 3 + strings.Count(readBack(note), "\n")
		blank := true
		for _, c := range row {
			blank = blank && strings.TrimSpace(c) == ""
		}
		fields := map[string]string{"first_name": first, "last_name": last, "email": email, "job_title": title, "join_date": date}
		want, verr := v1.ValidateNewEmployee(fields)
		dup := v1.ValidEmail(strings.TrimSpace(email)) && strings.EqualFold(strings.TrimSpace(email), anchor)
		// The join date as one date alone reads (the anchor's, ISO, says nothing of an order).
		joinDate, derr := onboard.ParseJoinDate(date, "")
		if derr == nil {
			fields["join_date"] = joinDate
			want, verr = v1.ValidateNewEmployee(fields)
		}
		iso := derr == nil
		switch {
		case blank:
			if len(hires) != 1 || len(problems) != 0 {
				t.Fatalf("blank row: hires %v problems %v", hires, problems)
			}
		case dup:
			if len(hires) != 1 || len(problems) != 1 || !problems[0].Duplicate || problems[0].Line != line {
				t.Fatalf("repeated email on line %d: hires %v problems %v", line, hires, problems)
			}
		case verr == nil && iso:
			if len(hires) != 2 || len(problems) != 0 || hires[1] != (onboard.Hire{Line: line, Employee: want}) {
				t.Fatalf("valid row on line %d (%+v): hires %v problems %v", line, want, hires, problems)
			}
		default:
			if len(hires) != 1 || len(problems) != 1 || problems[0].Line != line || problems[0].Duplicate {
				t.Fatalf("invalid row on line %d (%v, iso date %v): hires %v problems %v", line, verr, iso, hires, problems)
			}
			if p, want := problems[0], onboard.SafeCell(strings.TrimSpace(readBack(email))); p.Email != want {
				t.Fatalf("problem email %q, want %q", p.Email, want)
			}
		}
	})
}

// FuzzReadHiresCut reads a file and the same file cut short anywhere: reading never panics, a
// row the cut file ends inside is never a hire, and every hire of the cut file is a hire of the
// whole one, on the same line (a cut never makes a hire the whole file does not have).
func FuzzReadHiresCut(f *testing.F) {
	for _, s := range hireSeeds(f) {
		for _, at := range []uint16{0, 1, 50, 100, 150, 200, 300, 400, uint16(len(s) - 1), uint16(len(s) - 2)} {
			f.Add(s, at)
		}
	}
	f.Add([]byte("First name,Last name,Join date,Email\nAnn,Lee,2026-12-01,ann@example.com\nTrunc,Two,2026-12-02,trunc2@example.com\n"), uint16(104))
	f.Add([]byte("First name,Last name,Email,Join date\r\nAnn,Lee,ann@example.com,2026-12-01\r\n"), uint16(72))
	f.Add([]byte("First name,Last name,Email,Join date,Notes\nAnn,Lee,ann@example.com,2026-12-01,\"a\nb\"\n"), uint16(76))
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		opts := onboard.HireOptions{MaxRows: 1000}
		whole, werr := onboard.ReadHireFile(bytes.NewReader(data), opts)
		cut := data[:int(at)%(len(data)+1)]
		part, err := onboard.ReadHireFile(bytes.NewReader(cut), opts)
		if err != nil {
			if part.Hires != nil || part.Problems != nil {
				t.Fatalf("error %v with hires or problems", err)
			}
			return
		}
		if part.Cut > 0 {
			for _, h := range part.Hires {
				if h.Line >= part.Cut {
					t.Fatalf("a hire on line %d, in or after the row the file ends inside (line %d)", h.Line, part.Cut)
				}
			}
		}
		if len(cut) > 0 && cut[len(cut)-1] != '\n' && part.Cut == 0 {
			// Then the last row is blank: only separators, spaces and quotes on its last line.
			last := cut[max(bytes.LastIndexAny(cut, "\r\n")+1, 0):]
			if len(bytes.Trim(last, ",;|\t \v\f\"\ufeff")) > 0 && !bytes.HasPrefix(bytes.ToLower(cut), []byte("sep=")) {
				t.Fatalf("the file ends inside a row (%q) but Cut is 0", last)
			}
		}
		if werr != nil || len(cut) == len(data) {
			return
		}
		for _, h := range part.Hires {
			if !slices.Contains(whole.Hires, h) {
				t.Fatalf("the cut file has a hire the whole one does not: %+v", h)
			}
		}
	})
}

// FuzzParseJoinDate reads any cell as a join date, under each layout: a date read is a
// calendar date as YYYY-MM-DD; a rejection is one printable line naming the value (quoted)
// and never the whole of a long cell.
func FuzzParseJoinDate(f *testing.F) {
	for _, s := range []string{"25/12/2026", "12/25/2026", "25.12.26", "25-Dec-2026", "Dec 25, 2026", "2026-12-25", "31/04/2026",
		"45720", "25th December 2026", "29/02/00", "1/1/1", "\x1b[31m", "25/12\u00a0/2026", "Sept 31 2026", "ＤＥＣ 1 2026"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, layout uint8) {
		l := fuzzLayouts[int(layout)%len(fuzzLayouts)]
		d, err := onboard.ParseJoinDate(s, l)
		if err == nil {
			if again, perr := v1.ParseDate(d); perr != nil || again != d || !isoDate.MatchString(d) {
				t.Fatalf("ParseJoinDate(%q, %q) = %q, not a YYYY-MM-DD date (%v)", s, l, d, perr)
			}
			return
		}
		msg := err.Error()
		if msg == "" || strings.ContainsFunc(msg, unicode.IsControl) || !utf8.ValidString(msg) {
			t.Fatalf("ParseJoinDate(%q, %q): %q is not one printable line", s, l, msg)
		}
		if strings.TrimSpace(s) != "" && (!strings.HasPrefix(msg, `"`) || len(msg) > 600) {
			t.Fatalf("ParseJoinDate(%q, %q): %q does not start with the value, or is long", s, l, msg)
		}
	})
}

// FuzzJoinDateForms writes a date every way the reader takes it, and reads it back as that date:
// day first by default, month first under a month-first layout; two-digit years are 20xx.
func FuzzJoinDateForms(f *testing.F) {
	f.Add(uint16(2026), uint8(12), uint8(25))
	f.Add(uint16(2028), uint8(2), uint8(29))
	f.Add(uint16(2026), uint8(3), uint8(4))
	f.Add(uint16(1999), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, y uint16, m, d uint8) {
		date := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
		if y < 1 || y > 9999 || date.Year() != int(y) || date.Month() != time.Month(m) || date.Day() != int(d) {
			return
		}
		want := date.Format(time.DateOnly)
		forms := map[string][]string{
			"": {date.Format("2/1/2006"), date.Format("02/01/2006"), date.Format("02.01.2006"), date.Format("2-1-2006"),
				date.Format("2 Jan 2006"), date.Format("2-Jan-2006"), date.Format("2 January 2006"), date.Format("Jan 2, 2006"),
				date.Format("2006-01-02"), date.Format("2006/01/02")},
			"01/02/2006": {date.Format("1/2/2006"), date.Format("01/02/2006"), date.Format("01-02-2006"), date.Format("2 Jan 2006"), date.Format("2006-01-02")},
		}
		if y >= 2000 && y <= 2099 {
			forms[""] = append(forms[""], date.Format("02/01/06"), date.Format("2.1.06"), date.Format("02-Jan-06"))
			forms["01/02/2006"] = append(forms["01/02/2006"], date.Format("1/2/06"))
		}
		if y < 1000 {
			forms = map[string][]string{"": {date.Format("2006-01-02"), date.Format("2 Jan 2006")}} // years written with 4 digits only
		}
		for layout, written := range forms {
			for _, s := range written {
				if got, err := onboard.ParseJoinDate(s, layout); err != nil || got != want {
					t.Errorf("ParseJoinDate(%q, %q) = %q, %v; want %q", s, layout, got, err, want)
				}
			}
		}
	})
}
