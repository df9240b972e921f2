package onboard

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hrsync/hrsync/source/v1"
)

// Reading a CSV file of new hires, as spreadsheets write it: Excel (UTF-8 with a byte-order mark,
// CRLF, ';' in European locales, a lone CR from old Excel for Mac), Google Sheets and Numbers
// (UTF-8, LF), with human headers. A file is read in one pass, row by row: memory grows with the
// valid rows' fields and the problems (HireOptions.MaxRows bounds their number), never with the
// whole text, and one row is never longer than HireOptions.MaxRowBytes. The caller bounds the
// size of the input (Options.MaxFileBytes).

// DefaultMaxHireRows is HireOptions.MaxRows when it is not set.
const DefaultMaxHireRows = 100_000

// DefaultMaxRowBytes is HireOptions.MaxRowBytes when it is not set: some hundred times a new
// hire's row, and small enough that a runaway quote cannot hold much memory.
const DefaultMaxRowBytes = 64 << 10

// Hire is one valid row.
type Hire struct {
	Line     int            // 1-based line the row starts on in the file
	Employee v1.NewEmployee // validated; JoinDate YYYY-MM-DD
}

// RowProblem is a row that will not be sent, with why.
type RowProblem struct {
	Line int
	// Email is the row's email cell as given (trimmed), already made safe for a report (see
	// SafeCell); "" if none.
	Email string
	// FirstName and LastName are the row's cells as given (trimmed, on one line, cut to
	// maxNameBytes), for a person to find the row; "" if none. Personal data: for reports and
	// the person at the terminal, never logs.
	FirstName, LastName string
	// Reason is one line naming fields, and of their values only the join date's (cut short),
	// e.g. `join_date: "12/25/2026" is not a date read day first, …`, "email: used again (first
	// on line 3)". Like the names, it is for reports, not logs.
	Reason string
	// Duplicate is true when the row repeats an email seen earlier in the file (to be reported as
	// skipped, not rejected).
	Duplicate bool
}

// HireOptions configures ReadHires.
type HireOptions struct {
	// DateLayout, when set, is how the file's join dates are written (Go time layout, e.g.
	// "01/02/2006"); it must give a whole date (year, month and day). A layout that writes the
	// month before the day makes numeric dates read month first (US files); any other is one
	// more accepted form. YYYY/MM/DD and YYYY-MM-DD are always accepted and win over it. See
	// dates.go for every form read.
	DateLayout string
	// MaxRows bounds the rows read (when 0 or less, DefaultMaxHireRows); more is an error for
	// the whole file. Blank rows are not counted.
	MaxRows int
	// MaxRowBytes bounds one row's text, line ends not counted (when 0 or less,
	// DefaultMaxRowBytes); a longer row (a quote never closed, or not a CSV of hires) is an
	// error for the whole file.
	MaxRowBytes int
}

// HireFile is a file of new hires as ReadHireFile read it.
type HireFile struct {
	Hires    []Hire
	Problems []RowProblem
	// Ignored are the header's named columns that hrsync does not send (a "Department", a
	// "Notes"), in file order, each name on one line and cut short: column names only.
	Ignored []string
	// Cut is the line the last row starts on when the file ends inside that row, with no line
	// ending after it or inside a quoted cell: the file may be cut short, or still being
	// written. That row is a RowProblem (or, when it is the header or an unclosed quote that
	// spans lines, the file's error), never a Hire. 0 when the file ends with a line ending.
	Cut int
}

// ReadHires reads a whole file; a file it cannot read at all (not UTF-8 text, no header, a
// required column missing, unbalanced quotes that make the CSV unreadable, too many rows) is an
// error naming the problem; bad rows do not stop the others: they come back as RowProblems, in
// line order.
//
// The file is UTF-8, with or without a byte-order mark; its lines end in CRLF or LF, or all in a
// lone CR (old Excel for Mac); its separator is ',', ';' or a tab: the one that splits the header
// into the most known columns (or the one a first line "sep=;" names, as Excel honours). The header is the first row that
// is not blank; its cells are matched ignoring case, spaces and punctuation, and a few aliases
// are known ("Surname", "Work email", "Start date", "Role", ...). Unknown columns are ignored.
//
// Every row is checked as the API checks a create (v1.ValidateNewEmployee), after its cells
// are trimmed and its join date is read (YYYY/MM/DD, YYYY-MM-DD, day first as UK and European
// Excel writes it, 25/12/2026 or 25.12.26, 25 Dec 2026, or month first under a month-first
// opts.DateLayout; see dates.go). Numbers that make a date in both orders (03/04/2026) are
// rejected as ambiguous when another row's date can only be read in the other order. A row repeating an earlier row's email (compared ignoring case) is a Duplicate
// problem, whatever else is wrong with it. Rows whose cells are all blank are skipped. Hires and
// problems carry the physical line of the file the row starts on, counting from 1 at the top of
// the file (the header's line, when nothing is above it); a quoted cell may span lines.
//
// A last row the file ends inside (no line ending after it, or an unclosed quoted cell) is
// never a hire, however complete it looks: it is a RowProblem saying so (see HireFile.Cut).
//
// An error reading r is returned wrapped. On any error, ReadHires returns no hires and no
// problems.
func ReadHires(r io.Reader, opts HireOptions) ([]Hire, []RowProblem, error) {
	f, err := ReadHireFile(r, opts)
	if err != nil {
		return nil, nil, err
	}
	return f.Hires, f.Problems, nil
}

// ReadHireFile is ReadHires, telling also whether the file ends inside its last row. On an
// error, the HireFile holds only Cut.
func ReadHireFile(r io.Reader, opts HireOptions) (HireFile, error) {
	h := &hireReader{maxRows: opts.MaxRows, maxRowBytes: opts.MaxRowBytes}
	if h.maxRows <= 0 {
		h.maxRows = DefaultMaxHireRows
	}
	if h.maxRowBytes <= 0 {
		h.maxRowBytes = DefaultMaxRowBytes
	}
	var err error
	if h.dates, err = newDateReading(opts.DateLayout); err != nil {
		return HireFile{}, err
	}
	if err := h.open(r); err != nil {
		return HireFile{}, err
	}
	if err := h.read(); err != nil {
		return HireFile{Cut: h.cut}, err
	}
	h.settle()
	return HireFile{Hires: h.hires, Problems: h.problems, Ignored: h.ignored, Cut: h.cut}, nil
}

// SafeCell makes a cell safe to echo into a CSV report opened in a spreadsheet: a value starting
// with = + - @ (or tab/CR) gets a leading apostrophe, so it can never run as a formula (OWASP CSV
// injection guidance). Erring on the side of caution, so does a value whose first such character
// comes after leading white space, or is the full-width form of one (＝ ＋ － ＠), in case a
// spreadsheet reads those as formulas too. Quoting the cell (, " and newlines) is the CSV
// writer's job.
func SafeCell(s string) string {
	first, _ := utf8.DecodeRuneInString(s)
	if first == '\t' || first == '\r' {
		return "'" + s
	}
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
	if i < 0 {
		return s
	}
	switch r, _ := utf8.DecodeRuneInString(s[i:]); r {
	case '=', '+', '-', '@', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}

const (
	// sniffSize is how much of the file is looked at before reading it: its encoding, a sep=
	// line, and the header, to choose the separator.
	sniffSize = 64 << 10

	fieldFirstName = "first_name"
	fieldLastName  = "last_name"
	fieldEmail     = "email"
	fieldJobTitle  = "job_title"
	fieldJoinDate  = "join_date"
)

// hireReader is the state of one ReadHires.
type hireReader struct {
	maxRows     int
	maxRowBytes int
	dates       dateReading

	csv    *csv.Reader
	text   *rowText // what csv reads
	offset int      // lines before the ones csv counts (a sep= line)
	line   int      // the line the last row read starts on
	cut    int      // HireFile.Cut

	cols  map[string]int // create field → its column
	width int            // the header's cells
	rows  int            // rows read after the header, not counting blank ones
	first map[string]int // email (foldKey) → line of its first row

	hires    []Hire
	problems []RowProblem
	ignored  []string // HireFile.Ignored

	ambiguous     []ambiguousDate // hires whose join date is another date in the other order
	contrary      int             // the first row whose join date is one only in the other order
	contraryValue string          // its join date
	proof         int             // the first row whose join date is numbers that are a date only in the file's order
	proofValue    string          // its join date
}

// open looks at the start of the file for its encoding, a sep= line and the separator, and sets
// up the CSV reader after the byte-order mark and sep= line.
func (h *hireReader) open(r io.Reader) error {
	br := bufio.NewReaderSize(r, sniffSize)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return readError(err)
	}
	if err := sniff(head); err != nil {
		return err
	}
	skip := 0
	if bytes.HasPrefix(head, utf8BOM) {
		skip = len(utf8BOM)
	}
	crEnds := crLineEnds(head[skip:])
	sep, n := sepLine(head[skip:])
	if n > 0 {
		skip += n
		h.offset = 1
	} else {
		sep = detectSeparator(head[skip:], crEnds)
	}
	if _, err := br.Discard(skip); err != nil { // buffered: cannot fail
		return fmt.Errorf("read: %w", err)
	}
	var text io.Reader = br
	if crEnds {
		text = &lineEnds{r: text}
	}
	h.text = &rowText{r: text, sep: byte(sep), trim: sep != '\t', max: h.maxRowBytes}
	h.csv = newCSVReader(h.text, sep, false)
	return nil
}

// read reads the header and every row.
func (h *hireReader) read() error {
	for {
		h.text.mark()
		rec, err := h.csv.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if err := h.unreadable(err); err != nil {
				return err
			}
			continue
		}
		line, _ := h.csv.FieldPos(0)
		line += h.offset
		h.line = line
		if h.endsInside() {
			if err := h.lastRow(rec, line); err != nil {
				return err
			}
			continue
		}
		if err := checkText(rec, line); err != nil {
			return err
		}
		if isBlank(rec) {
			continue
		}
		if h.cols == nil {
			if err := h.header(rec, line); err != nil {
				return err
			}
			continue
		}
		if err := h.count(line); err != nil {
			return err
		}
		h.row(rec, line)
	}
	if h.cols == nil {
		return errors.New("the file has no header: it is empty or blank")
	}
	return nil
}

// endsInside reports whether the row just read is the last and the file ends inside it: no
// line ending after it, or inside a quoted cell. The CSV reader reads a row that is not ended
// by a line ending up to the end of the file, so the text has then been read to its end.
func (h *hireReader) endsInside() bool {
	return h.text.eof && h.csv.InputOffset() == h.text.n && (h.text.quoted() || !h.text.lineEnded())
}

// cutReason says why the last row is not taken: the file ends inside it.
func (h *hireReader) cutReason(cells int) string {
	const again = "it may be cut short; end the file with a line break and drop it again"
	switch {
	case h.text.quoted():
		return "the file ends inside a quoted cell of this row (its closing quote is missing): it may be cut short; close the quote, end the file with a line break and drop it again"
	case cells >= 0 && cells < h.width:
		return fmt.Sprintf("the file ends inside this row (no line ending), which has %d of the header's %d cells: %s", cells, h.width, again)
	}
	return "the file ends inside this row (no line ending): " + again
}

// lastRow handles a row the file ends inside: never a hire. A blank one is nothing; the header
// is read as usual (it has no rows after it); any other is rejected with the reason, whatever
// its cells hold (an email cut from .com still looks like an email).
func (h *hireReader) lastRow(rec []string, line int) error {
	if isBlank(rec) {
		return nil
	}
	h.cut = line
	if h.cols == nil {
		if err := checkText(rec, line); err != nil {
			return err
		}
		return h.header(rec, line)
	}
	if err := h.count(line); err != nil {
		return err
	}
	h.problem(line, printable(h.cell(rec, fieldEmail)), h.cutReason(len(rec)), false)
	h.name(rec)
	return nil
}

// printable is s with what is not UTF-8 text (a character cut in two) or a NUL dropped.
func printable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
}

// unreadable handles a row the CSV reader could not read: a quote problem within one line is
// that row's problem; anything else makes the file unreadable.
func (h *hireReader) unreadable(err error) error {
	if errors.Is(err, errRowTooLong) {
		at := "the first row"
		if h.line > 0 {
			at = fmt.Sprintf("a row after line %d", h.line)
		}
		return fmt.Errorf("%s is longer than %d KiB (a quote not closed, or not a CSV of new hires?): fix the file", at, h.maxRowBytes>>10)
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return readError(err)
	}
	start, end := pe.StartLine+h.offset, pe.Line+h.offset
	h.line = start
	ends := h.endsInside()
	if ends {
		h.cut = start
	}
	if h.cols == nil {
		return fmt.Errorf("line %d: the header cannot be read: %v", start, pe.Err)
	}
	if ends && start == end {
		// The file ends inside a quoted cell opened on its last line.
		if err := h.count(start); err != nil {
			return err
		}
		h.problem(start, "", h.cutReason(-1), false)
		return nil
	}
	if ends {
		return fmt.Errorf("lines %d-%d: unbalanced quotes: the file ends inside a quoted cell that starts on line %d (the file cut short, or that quote not closed where it should be), so the rows from there cannot be read; fix its quotes, end the file with a line break and drop it again", start, end, start)
	}
	if start != end {
		// A quote opened a cell that ran over lines, so where the rows after it start is
		// anyone's guess.
		return fmt.Errorf("lines %d-%d: unbalanced quotes: a quoted cell starting on line %d is not closed where it should be, so the rows after it cannot be read; fix its quotes", start, end, start)
	}
	if err := h.count(start); err != nil {
		return err
	}
	reason := `quotes: a quoted cell is not closed properly (text after its closing ", or no closing ")`
	if errors.Is(pe.Err, csv.ErrBareQuote) {
		reason = `quotes: a " inside a cell that is not quoted (quote the cell and double the ")`
	}
	h.problem(start, "", reason, false)
	return nil
}

// count counts a row, refusing the file past maxRows.
func (h *hireReader) count(line int) error {
	h.rows++
	if h.rows > h.maxRows {
		return fmt.Errorf("line %d: the file has more than %d rows: split it", line, h.maxRows)
	}
	return nil
}

// checkText refuses a row that is not UTF-8 text.
func checkText(rec []string, line int) error {
	for _, c := range rec {
		if !utf8.ValidString(c) {
			return fmt.Errorf("line %d: the file is not UTF-8 text (Windows-1252 or another legacy encoding?): save it as CSV UTF-8", line)
		}
		if strings.IndexByte(c, 0) >= 0 {
			return fmt.Errorf("line %d: the file holds NUL bytes, so it is not UTF-8 text: save it as CSV UTF-8", line)
		}
	}
	return nil
}

func isBlank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// row turns a row that is not blank into a Hire or a RowProblem.
func (h *hireReader) row(rec []string, line int) {
	email := h.cell(rec, fieldEmail)
	if len(rec) > h.width && !isBlank(rec[h.width:]) {
		// Likely a separator inside a cell that is not quoted: the cells are shifted.
		h.problem(line, email, fmt.Sprintf("row has %d cells but the header has %d, and the extra cells are not blank", len(rec), h.width), false)
		h.name(rec)
		return
	}
	if v1.ValidEmail(email) {
		k := foldKey(email)
		if first, seen := h.first[k]; seen {
			h.problem(line, email, fmt.Sprintf("email: used again (first on line %d)", first), true)
			h.name(rec)
			return
		}
		h.first[k] = line
	}
	fields := map[string]string{
		fieldFirstName: h.cell(rec, fieldFirstName),
		fieldLastName:  h.cell(rec, fieldLastName),
		fieldEmail:     email,
	}
	if _, ok := h.cols[fieldJobTitle]; ok {
		fields[fieldJobTitle] = h.cell(rec, fieldJobTitle)
	}
	raw := h.cell(rec, fieldJoinDate)
	date, dateProblem, kind := h.joinDate(raw)
	fields[fieldJoinDate] = raw
	if dateProblem == "" && date != "" {
		fields[fieldJoinDate] = date
	}
	switch {
	case kind == dateContrary && h.contrary == 0:
		h.contrary, h.contraryValue = line, raw
	case kind == dateProven && h.proof == 0:
		h.proof, h.proofValue = line, raw
	}
	ne, err := v1.ValidateNewEmployee(fields)
	if err == nil && dateProblem == "" {
		if kind == dateAmbiguous {
			h.ambiguous = append(h.ambiguous, ambiguousDate{hire: len(h.hires), raw: raw})
		}
		h.hires = append(h.hires, Hire{Line: line, Employee: ne})
		return
	}
	h.problem(line, email, reasons(err, dateProblem), false)
	h.name(rec)
}

// reasons writes the validator's problems (and the join date's, which replaces the validator's
// view of it) as one line: "first_name: missing; email: not a valid email address".
func reasons(err error, dateProblem string) string {
	var parts []string
	var verr *v1.ValidationError
	switch {
	case errors.As(err, &verr):
		for _, p := range verr.Problems {
			name := strings.TrimSuffix(strings.TrimPrefix(p.Field, "employee["), "]")
			if name == fieldJoinDate && dateProblem != "" {
				continue
			}
			for _, r := range p.Reasons {
				parts = append(parts, name+": "+strings.TrimPrefix(r, "is "))
			}
		}
	case err != nil:
		parts = append(parts, err.Error())
	}
	if dateProblem != "" {
		parts = append(parts, fieldJoinDate+": "+dateProblem)
	}
	return oneLine(strings.Join(parts, "; "))
}

// oneLine replaces control characters, so a reason stays on one line of a report.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// problem records a row that will not be sent.
func (h *hireReader) problem(line int, email, reason string, dup bool) {
	h.problems = append(h.problems, RowProblem{Line: line, Email: SafeCell(email), Reason: reason, Duplicate: dup})
}

// maxNameBytes bounds a name kept for a report, and a column name.
const maxNameBytes = 100

// name sets the names of the last problem from its row's cells.
func (h *hireReader) name(rec []string) {
	p := &h.problems[len(h.problems)-1]
	p.FirstName = cut(oneLine(printable(h.cell(rec, fieldFirstName))), maxNameBytes)
	p.LastName = cut(oneLine(printable(h.cell(rec, fieldLastName))), maxNameBytes)
}

// cut cuts s to at most n bytes, at a character's start, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// foldKey maps strings equal under Unicode case folding (strings.EqualFold) to the same key:
// each rune becomes the least rune of its folding orbit.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
