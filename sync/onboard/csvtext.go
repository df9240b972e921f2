package onboard

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

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
