package onboard

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
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

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// requiredHireFields are the columns a file must have, in the order they are reported.
var requiredHireFields = []string{fieldFirstName, fieldLastName, fieldEmail, fieldJoinDate}

// hireColumns maps a header cell, reduced by headerKey, to the create field it names.
var hireColumns = map[string]string{
	"firstname": fieldFirstName, "firstnames": fieldFirstName, "givenname": fieldFirstName,
	"givennames": fieldFirstName, "forename": fieldFirstName, "forenames": fieldFirstName,

	"lastname": fieldLastName, "surname": fieldLastName, "familyname": fieldLastName,

	"email": fieldEmail, "emailaddress": fieldEmail, "workemail": fieldEmail,
	"workemailaddress": fieldEmail,

	"joindate": fieldJoinDate, "joiningdate": fieldJoinDate, "startdate": fieldJoinDate,
	"companyjoindate": fieldJoinDate, "hiredate": fieldJoinDate,

	"jobtitle": fieldJobTitle, "title": fieldJobTitle, "job": fieldJobTitle,
	"role": fieldJobTitle, "position": fieldJobTitle,
}

// columnHints are header names suggested for a missing column.
var columnHints = map[string]string{
	fieldFirstName: `"First name"`,
	fieldLastName:  `"Last name" or "Surname"`,
	fieldEmail:     `"Email"`,
	fieldJoinDate:  `"Join date" or "Start date"`,
}

// headerKey reduces a header cell to its lower-case letters and digits, ignoring a trailing
// remark in brackets: "First Name", "first_name", "FIRST-NAME" and "First name:" are all
// "firstname", "Start date (YYYY-MM-DD)" is "startdate".
func headerKey(cell string) string {
	if i := strings.IndexAny(cell, "(["); i >= 0 {
		if k := headerKey(cell[:i]); k != "" {
			return k
		}
	}
	var b strings.Builder
	for _, r := range cell {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

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

// ambiguousDate is a hire whose join date is another date read in the other order.
type ambiguousDate struct {
	hire int    // in hires
	raw  string // the cell
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

// readError is an error reading the file, wrapped; the file's size past its limit is said as
// it is.
func readError(err error) error {
	var big *FileTooLargeError
	if errors.As(err, &big) {
		return err
	}
	return fmt.Errorf("read: %w", err)
}

// crLineEnds reports whether the first line of the file (outside quotes) ends in a lone CR, as
// every line of a file from Excel for Mac before 2016 does, line breaks inside cells included.
func crLineEnds(head []byte) bool {
	quoted := false
	for i, b := range head {
		switch {
		case b == '"':
			quoted = !quoted
		case quoted:
		case b == '\n':
			return false
		case b == '\r':
			return i+1 < len(head) && head[i+1] != '\n'
		}
	}
	return false
}

// newCSVReader reads CSV separated by sep; crEnds turns lone CRs into line ends first (the CSV
// reader ends lines at LF only, and drops the CR of a CRLF).
func newCSVReader(r io.Reader, sep rune, crEnds bool) *csv.Reader {
	if crEnds {
		r = &lineEnds{r: r}
	}
	cr := csv.NewReader(r)
	cr.Comma = sep
	cr.FieldsPerRecord = -1 // rows may be short or long: see hireReader.row
	// ` "Smith, Jr."` is a quoted cell; with tabs as separators, leading tabs are empty cells.
	cr.TrimLeadingSpace = sep != '\t'
	cr.ReuseRecord = true
	return cr
}

// sniff refuses what is not UTF-8 text, naming what it is when that is known.
func sniff(head []byte) error {
	const saveAs = "save it as CSV UTF-8"
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return errors.New("the file is UTF-16 text (Excel's \"Unicode Text\"), not UTF-8: " + saveAs)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return errors.New("the file is a spreadsheet workbook (.xlsx or .ods), not CSV: " + saveAs)
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return errors.New("the file is an Excel 97-2003 workbook (.xls), not CSV: " + saveAs)
	case bytes.IndexByte(head, 0) >= 0:
		return errors.New("the file holds NUL bytes, so it is not UTF-8 text (UTF-16 without a byte-order mark?): " + saveAs)
	}
	return nil
}

// sepLine reads a first line "sep=;", which tells Excel the separator: it returns the separator
// and the length of the line, or 0, 0 when there is no such line.
func sepLine(head []byte) (sep rune, n int) {
	const prefix = "sep="
	if len(head) < len(prefix)+1 || !strings.EqualFold(string(head[:len(prefix)]), prefix) {
		return 0, 0
	}
	c := head[len(prefix)]
	if !strings.ContainsRune(",;\t|", rune(c)) {
		return 0, 0
	}
	n = len(prefix) + 1
	switch rest := head[n:]; {
	case len(rest) == 0:
	case bytes.HasPrefix(rest, []byte("\r\n")):
		n += 2
	case rest[0] == '\n' || rest[0] == '\r':
		n++
	default:
		return 0, 0
	}
	return rune(c), n
}

// detectSeparator returns the separator that splits the header (the first row that is not
// blank) into the most known columns; ',' when none does better.
func detectSeparator(head []byte, crEnds bool) rune {
	best, bestN := ',', 0
	for _, sep := range []rune{',', ';', '\t'} {
		cr := newCSVReader(bytes.NewReader(head), sep, crEnds)
		cr.LazyQuotes = true // a guess: the real reading is strict
		for {
			rec, err := cr.Read()
			if err != nil {
				break
			}
			if isBlank(rec) {
				continue
			}
			if n := knownColumns(rec); n > bestN {
				best, bestN = sep, n
			}
			break
		}
	}
	return best
}

// knownColumns counts the distinct create fields a header names.
func knownColumns(header []string) int {
	seen := make(map[string]bool)
	for _, c := range header {
		if f, ok := hireColumns[headerKey(c)]; ok {
			seen[f] = true
		}
	}
	return len(seen)
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

// header maps the header's columns to create fields.
func (h *hireReader) header(rec []string, line int) error {
	h.width = len(rec)
	h.cols = make(map[string]int)
	h.first = make(map[string]int)
	for i, c := range rec {
		f, ok := hireColumns[headerKey(c)]
		if !ok {
			continue
		}
		if j, dup := h.cols[f]; dup {
			return fmt.Errorf("line %d: columns %d (%q) and %d (%q) both give %s: keep one", line, j+1, strings.TrimSpace(rec[j]), i+1, strings.TrimSpace(c), f)
		}
		h.cols[f] = i
	}
	if len(h.cols) == 0 {
		return fmt.Errorf("line %d: the first row is not a header: none of its cells names a known column (first_name, last_name, email, join_date, job_title)", line)
	}
	var missing []string
	for _, f := range requiredHireFields {
		if _, ok := h.cols[f]; !ok {
			missing = append(missing, fmt.Sprintf("%s (e.g. %s)", f, columnHints[f]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("line %d: the header lacks required columns: %s", line, strings.Join(missing, ", "))
	}
	for _, c := range rec {
		if _, ok := hireColumns[headerKey(c)]; !ok && strings.TrimSpace(c) != "" {
			h.ignored = append(h.ignored, cut(oneLine(strings.TrimSpace(c)), maxNameBytes))
		}
	}
	return nil
}

// cell returns the trimmed cell of a field ("" when the row is short or the column absent), a
// copy: the row's other cells are not kept with it.
func (h *hireReader) cell(rec []string, field string) string {
	i, ok := h.cols[field]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.Clone(strings.TrimSpace(rec[i]))
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

// joinDate reads a join date (see dates.go) as YYYY-MM-DD. It returns why s is not one; "" is
// neither (the validator reports it missing).
func (h *hireReader) joinDate(s string) (date, problem string, kind dateKind) {
	if s == "" {
		return "", "", dateOther
	}
	return h.dates.read(s)
}

// settle rejects the hires whose join date is ambiguous when a row's join date can only be read
// in the other order: the file's dates may all be written in that order, and read in the file's
// they would be wrong without a word.
func (h *hireReader) settle() {
	if h.contrary == 0 || len(h.ambiguous) == 0 {
		return
	}
	drop := make(map[int]bool, len(h.ambiguous))
	for _, a := range h.ambiguous {
		x := h.hires[a.hire]
		drop[a.hire] = true
		e := x.Employee
		h.problems = append(h.problems, RowProblem{Line: x.Line, Email: SafeCell(e.Email), FirstName: cut(oneLine(e.FirstName), maxNameBytes),
			LastName: cut(oneLine(e.LastName), maxNameBytes), Reason: oneLine(fieldJoinDate + ": " + h.dates.ambiguous(a.raw, e.JoinDate, h.contrary, h.contraryValue, h.proof, h.proofValue))})
	}
	kept := h.hires[:0]
	for i, x := range h.hires {
		if !drop[i] {
			kept = append(kept, x)
		}
	}
	clear(h.hires[len(kept):])
	h.hires = kept
	slices.SortStableFunc(h.problems, func(a, b RowProblem) int { return a.Line - b.Line })
}

// isoShaped reports whether s is written YYYY-MM-DD or YYYY/MM/DD, whether or not it exists.
func isoShaped(s string) bool {
	if len(s) != 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return false
	}
	for i := range len(s) {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// dateExample is written in a configured layout to show it in reasons, to check it, and to tell
// its order (31 comes before 1 day first).
var dateExample = time.Date(2025, time.January, 31, 0, 0, 0, 0, time.UTC)

// checkDateLayout refuses a layout that does not give back the dates written in it.
func checkDateLayout(layout string) error {
	for _, d := range []time.Time{dateExample, time.Date(1999, time.November, 7, 0, 0, 0, 0, time.UTC)} {
		t, err := time.Parse(layout, d.Format(layout))
		if err != nil || t.Format(time.DateOnly) != d.Format(time.DateOnly) {
			return fmt.Errorf("DateLayout %q is not the layout of a whole date (year, month and day, e.g. \"02/01/2006\")", layout)
		}
	}
	return nil
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

// lineEnds reads r with lone CR (and CRLF) line ends turned into LF, so the CSV reader sees, and
// counts, every line end of a file from old Excel for Mac.
type lineEnds struct {
	r      io.Reader
	prevCR bool // the last byte read was a CR, written as LF: an LF right after it is dropped
}

func (l *lineEnds) Read(p []byte) (int, error) {
	for {
		n, err := l.r.Read(p)
		out := p[:0] // filtered in place: out never overtakes the bytes read
		for _, b := range p[:n] {
			switch {
			case b == '\n' && l.prevCR:
				l.prevCR = false
				continue
			case b == '\r':
				l.prevCR = true
				b = '\n'
			default:
				l.prevCR = false
			}
			out = append(out, b)
		}
		// Only a dropped LF can leave nothing from something: read on rather than return 0, nil.
		if len(out) > 0 || err != nil || n == 0 {
			return len(out), err
		}
	}
}

// csvReadAhead is the most the CSV reader reads ahead of the row it reads: its buffer
// (csv.NewReader's bufio.Reader, of the default size).
const csvReadAhead = 4096

// errRowTooLong is rowText's: a row longer than its max.
var errRowTooLong = errors.New("row too long")

// rowText is the text the CSV reader reads, watched as it goes by: it refuses a row longer
// than max bytes (line ends not counted, so blank lines cost nothing), and tells, at the end of
// the file, whether the file ended with a line ending and outside a quoted cell. A row is
// measured by what is read from the last mark, which the reader sets before each row: the CSV
// reader reads ahead by at most its buffer (csvReadAhead), so what is read for a row is its
// length give or take a buffer. A row is refused when that is over max and a buffer: it is then
// longer than max, and one longer than max by two buffers always is.
type rowText struct {
	r    io.Reader
	sep  byte // the separator: ',', ';', '\t' or '|'
	trim bool // spaces before a cell's opening quote are skipped (csv.Reader.TrimLeadingSpace)
	max  int

	n     int64 // bytes read
	eof   bool  // r is read to its end
	last  byte  // the last byte read
	state cellState
	row   int // bytes of the row, from the mark
}

// cellState is where the text read so far ends, as RFC 4180 reads it.
type cellState uint8

const (
	cellStart   cellState = iota // a cell starts: after a separator or a line end
	unquoted                     // in a cell that is not quoted (or text after a closing quote)
	quoted                       // in a quoted cell
	quoteInside                  // a quote in a quoted cell: doubled, or the cell's end
)

func (t *rowText) mark() { t.row = 0 }

// quoted reports whether the text read ends inside a quoted cell.
func (t *rowText) quoted() bool { return t.state == quoted }

// lineEnded reports whether the text read ends with a line end: LF or CRLF (a lone CR of old
// Excel for Mac is an LF here already). A CR alone at the end of another file may be the first
// half of a CRLF, or a CR inside a cell: the row is not taken as ended.
func (t *rowText) lineEnded() bool { return t.last == '\n' }

func (t *rowText) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, b := range p[:n] {
		t.step(b)
		if b != '\n' && b != '\r' {
			t.row++
		}
	}
	if n > 0 {
		t.n += int64(n)
		t.last = p[n-1]
	}
	if t.row > t.max+csvReadAhead {
		return n, errRowTooLong
	}
	if errors.Is(err, io.EOF) {
		t.eof = true
	}
	return n, err
}

// step moves the cell state past b.
func (t *rowText) step(b byte) {
	end := b == t.sep || b == '\n'
	switch t.state {
	case cellStart:
		switch {
		case b == '"':
			t.state = quoted
		case end || b == '\r' || (t.trim && (b == ' ' || b == '\t' || b == '\v' || b == '\f')):
		default:
			t.state = unquoted
		}
	case unquoted:
		if end {
			t.state = cellStart
		}
	case quoted:
		if b == '"' {
			t.state = quoteInside
		}
	case quoteInside:
		switch {
		case b == '"':
			t.state = quoted
		case end:
			t.state = cellStart
		case b == '\r':
		default:
			t.state = unquoted // the CSV reader's error: it goes on at the next line
		}
	}
}
