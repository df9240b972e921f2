package personal

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/onboard"
)

// Private modes of an export, whatever the umask.
const (
	exportFile   fs.FileMode = 0o600
	exportFolder fs.FileMode = 0o700
)

// Document is a subject-access export's JSON document: whom (x), when (now), by which build
// (version), from which warehouse (a's, described without its secrets), what it leaves out, and
// each table's rows, values as stored.
func Document(a *config.Account, x sink.SubjectExport, now time.Time, version string) ([]byte, error) {
	dialect, _ := sink.Classify(a.Warehouse.URL)
	warehouse := map[string]string{"account": a.Name, "backend": string(dialect), "url": sink.WithoutPassword(a.Warehouse.URL)}
	if dialect != "sqlite" {
		warehouse["schema"] = a.Warehouse.Schema
	}
	doc := struct {
		Subject     map[string]int64    `json:"subject"`
		GeneratedAt string              `json:"generated_at"`
		Hrsync      string              `json:"hrsync"`
		Warehouse   map[string]string   `json:"warehouse"`
		About       []string            `json:"about"`
		Tables      []sink.SubjectTable `json:"tables"`
	}{
		Subject: map[string]int64{"employee_id": x.EmployeeID}, GeneratedAt: now.UTC().Format(time.RFC3339),
		Hrsync: version, Warehouse: warehouse, About: exportAbout, Tables: x.Tables,
	}
	// Values as stored: & < > are not escaped.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// exportAbout says what an export holds and leaves out (docs/personal-data.md, "Subject
// access").
var exportAbout = []string{
	"Every table of the warehouse that can hold a reference to an employee was searched; each is listed, with its rows (none: nothing there).",
	"<table>: the person's own rows, every column as stored; <table>_history: every version of them, with the period it was current.",
	"named_in_<table>: records of other people that name the person (as line manager, holiday approver, approver): the record's id, the field and the person's object as stored, nothing else of the record.",
	"Other people's names and emails are left out of the person's own records: a nested person who is not them (their approver, their line manager) keeps only their id (GDPR Art. 15(4)).",
	"Free text (notes, reasons) and members no declaration names (extra) are given as stored: they may mention others and are for the controller to review before sending.",
}

// Export is where one employee's subject-access export goes: DIR/subject-access-<ID>.json and
// the folder DIR/subject-access-<ID>/ of CSV files, one per table with rows. Its files are 0600
// and its folders 0700, whatever the umask.
type Export struct {
	dir, base string
}

// NewExport is the export of employee id in dir.
func NewExport(dir string, id int64) Export {
	return Export{dir: dir, base: "subject-access-" + strconv.FormatInt(id, 10)}
}

// Paths are where the export is written: its JSON document and its folder of CSV files.
func (e Export) Paths() (document, folder string) { return e.jsonPath(), e.folder() }

func (e Export) jsonPath() string { return filepath.Join(e.dir, e.base+".json") }
func (e Export) folder() string   { return filepath.Join(e.dir, e.base) }

// Absent refuses an export already there, in part or whole: its error names the path and
// --force.
func (e Export) Absent() error {
	for _, p := range []string{e.jsonPath(), e.folder()} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists: an export is not overwritten; --force replaces it", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Write writes the export, the JSON document doc and a CSV file per table with rows:
// everything in a private temporary folder in DIR first (made if need be), then the CSV folder
// and the JSON document renamed into place, the document last. With replace, an export already
// there is moved aside into the temporary folder and removed with it; without, one written
// meanwhile is refused (Absent).
func (e Export) Write(doc []byte, tables []sink.SubjectTable, replace bool) error {
	if err := os.MkdirAll(e.dir, exportFolder); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(e.dir, "."+e.base+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, exportFolder); err != nil {
		return err
	}
	folder := filepath.Join(tmp, e.base)
	if err := os.Mkdir(folder, exportFolder); err != nil {
		return err
	}
	if err := os.Chmod(folder, exportFolder); err != nil { // the umask may have taken bits off
		return err
	}
	for _, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if err := writePrivateFile(filepath.Join(folder, t.Name+".csv"), func(w io.Writer) error { return writeCSV(w, t) }); err != nil {
			return err
		}
	}
	tmpJSON := filepath.Join(tmp, e.base+".json")
	if err := writePrivateFile(tmpJSON, func(w io.Writer) error { _, err := w.Write(doc); return err }); err != nil {
		return err
	}
	if replace {
		if err := os.Rename(e.folder(), filepath.Join(tmp, "replaced")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else if err := e.Absent(); err != nil { // written meanwhile
		return err
	}
	if err := os.Rename(folder, e.folder()); err != nil {
		return err
	}
	return os.Rename(tmpJSON, e.jsonPath())
}

// writePrivateFile creates path (which must not exist) 0600, whatever the umask, and writes it.
func writePrivateFile(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, exportFile)
	if err != nil {
		return err
	}
	err = f.Chmod(exportFile)
	if err == nil {
		bw := bufio.NewWriter(f)
		if err = write(bw); err == nil {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeCSV writes a table's rows under a header of its columns, every cell safe to open in a
// spreadsheet (onboard.SafeCell); null is an empty cell.
func writeCSV(w io.Writer, t sink.SubjectTable) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(t.Columns)
	cells := make([]string, len(t.Columns))
	for _, r := range t.Rows {
		for i, v := range r {
			cells[i] = onboard.SafeCell(v.Text)
		}
		_ = cw.Write(cells)
	}
	cw.Flush()
	return cw.Error()
}

// Print says where the export of x is and how many rows each table gave, the first line after
// prefix: never a value.
func (e Export) Print(w io.Writer, prefix string, x sink.SubjectExport) {
	files := 0
	for _, t := range x.Tables {
		if len(t.Rows) > 0 {
			files++
		}
	}
	fmt.Fprintf(w, "%ssubject access for employee %d: %d rows\n  %s\n  %s%c (%d CSV files)\n",
		prefix, x.EmployeeID, x.Rows(), e.jsonPath(), e.folder(), filepath.Separator, files)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TABLE\tROWS")
	for _, t := range x.Tables {
		fmt.Fprintf(tw, "  %s\t%d\n", t.Name, len(t.Rows))
	}
	_ = tw.Flush()
}
