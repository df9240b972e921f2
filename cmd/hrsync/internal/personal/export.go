package personal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Private modes of an export, whatever the umask.
const (
	exportFile   fs.FileMode = 0o600
	exportFolder fs.FileMode = 0o700
)

// Export is where one employee's subject-access export goes: DIR/subject-access-<ID>.html (the
// document to read and print), .json and .csv (the same, for machines). Its files are 0600 and
// the folders it makes 0700, whatever the umask.
type Export struct {
	dir, base string
}

// NewExport is the export of employee id in dir.
func NewExport(dir string, id int64) Export {
	return Export{dir: dir, base: "subject-access-" + strconv.FormatInt(id, 10)}
}

// exportKinds are the export's files, by extension, in the order they are put in place: the
// HTML document, the one a reader opens, last.
var exportKinds = []string{".json", ".csv", ".html"}

// Paths are where the export is written: its HTML, JSON and CSV files.
func (e Export) Paths() []string {
	return []string{e.path(".html"), e.path(".json"), e.path(".csv")}
}

func (e Export) path(ext string) string { return filepath.Join(e.dir, e.base+ext) }

// Absent refuses an export already there, in part or whole: its error names the path and
// --force.
func (e Export) Absent() error {
	for _, ext := range exportKinds {
		p := e.path(ext)
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists: an export is not overwritten; --force replaces it", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Write writes the export of s: every file in a private temporary folder in DIR first (made
// if need be), then renamed into place, the HTML document last. With replace, an export already
// there is replaced; without, one written meanwhile is refused (Absent).
func (e Export) Write(s Subject, replace bool) error {
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
	writers := map[string]func(io.Writer) error{".html": s.HTML, ".json": s.JSON, ".csv": s.CSV}
	for _, ext := range exportKinds {
		if err := writePrivateFile(filepath.Join(tmp, e.base+ext), writers[ext]); err != nil {
			return err
		}
	}
	if !replace {
		if err := e.Absent(); err != nil { // written meanwhile
			return err
		}
	}
	for _, ext := range exportKinds {
		if err := os.Rename(filepath.Join(tmp, e.base+ext), e.path(ext)); err != nil {
			return err
		}
	}
	return nil
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

// Print says where the export of s is and what it holds, the first line after prefix: counts
// of records per category, never a value.
func (e Export) Print(w io.Writer, prefix string, s Subject) {
	fmt.Fprintf(w, "%ssubject access for employee %d: %d categories, %d erasures\n", prefix, s.EmployeeID, len(s.Categories), len(s.Erasures))
	for _, p := range e.Paths() {
		fmt.Fprintf(w, "  %s\n", p)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CATEGORY\tRECORDS\tCLASSES")
	for _, c := range s.Categories {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", c.Key, len(c.Records), strings.Join(c.Classes, ", "))
	}
	if len(s.Mentions) > 0 {
		fmt.Fprintf(tw, "  named in others' records\t%d\t\n", len(s.Mentions))
	}
	_ = tw.Flush()
}
