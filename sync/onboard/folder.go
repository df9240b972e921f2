package onboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// Modes of what onboarding creates, by default (Access): its files and folders hold personal
// data, so only the account hrsync runs as may read them, whatever the umask.
const (
	privateFile   fs.FileMode = 0o600
	privateFolder fs.FileMode = 0o700
)

// writePrivate writes a new file with write, of access's mode and group (private by default),
// then renames it over name in root. The temporary file is made anew (O_EXCL): a link left in
// its place is removed, never followed.
func writePrivate(root *os.Root, name string, access Access, write func(io.Writer) error) error {
	tmp := name + ".tmp"
	if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateFile)
	if err != nil {
		return err
	}
	err = access.apply(f) // the umask may have taken bits off
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// LinkedFolderError is a folder onboarding writes to (processed/, failed/, reports/: Folders)
// that is a symbolic link, or not a folder: hrsync does not follow it, so personal data never
// lands where a link points, and retention deletes nothing through it.
type LinkedFolderError struct {
	Path string
	Link bool // a symbolic link; else something that is not a folder
}

func (e *LinkedFolderError) Error() string {
	if e.Link {
		return fmt.Sprintf("onboarding folder: %s is a symbolic link; hrsync does not follow links where it moves files and writes reports: make it a real folder", e.Path)
	}
	return fmt.Sprintf("onboarding folder: %s is not a folder: move it away", e.Path)
}

// Folders are the folders of a drop folder that onboarding writes to: the files done with
// (processed/) and given up on (failed/) with their reports, and the reports of the files named
// to hrsync onboard that lie in the drop folder (reports/).
var Folders = []string{processedDir, failedDir, reportsDir}

// folderInfo is what Lstat finds at name in root: nil when there is nothing; a
// LinkedFolderError when it is a symbolic link (to anywhere, inside the folder too) or not a
// folder.
func folderInfo(root *os.Root, name string) (fs.FileInfo, error) {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("onboarding folder: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, &LinkedFolderError{Path: filepath.Join(root.Name(), name), Link: true}
	case !fi.IsDir():
		return nil, &LinkedFolderError{Path: filepath.Join(root.Name(), name)}
	}
	return fi, nil
}

// checkFolder refuses name in root when it exists and is a link or not a folder; exists tells
// whether it does.
func checkFolder(root *os.Root, name string) (exists bool, err error) {
	fi, err := folderInfo(root, name)
	return fi != nil, err
}

// OpenFolder opens name, one of Folders, in the drop folder root: nil when there is none; a
// LinkedFolderError when it is a symbolic link or not a folder. What it returns is the folder
// Lstat found, not one put in its place since, and nothing opened through it leaves it.
func OpenFolder(root *os.Root, name string) (*os.Root, error) {
	fi, err := folderInfo(root, name)
	if err != nil || fi == nil {
		return nil, err
	}
	r, err := root.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	if at, err := r.Stat("."); err != nil || !os.SameFile(at, fi) { // made a link meanwhile
		r.Close()
		return nil, &LinkedFolderError{Path: filepath.Join(root.Name(), name), Link: true}
	}
	return r, nil
}

// privateFolderIn makes sure name in root is a folder, not a link: one that is missing is made
// with access's folder mode and group (private, 0700, by default), whatever the umask. One that
// exists keeps the mode it has when access is private; otherwise it is given access, so that a
// group configured after the folder was made can open it.
func privateFolderIn(root *os.Root, name string, access Access) error {
	exists, err := checkFolder(root, name)
	if err != nil {
		return err
	}
	if exists {
		if access.private() {
			return nil
		}
		if err := access.applyFolder(root, name); err != nil {
			return fmt.Errorf("onboarding folder: %w", err)
		}
		return nil
	}
	if err := root.Mkdir(name, privateFolder); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	if _, err := checkFolder(root, name); err != nil { // made by another process meanwhile
		return err
	}
	if err := access.applyFolder(root, name); err != nil {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	return nil
}

// checkFolders refuses a drop folder whose processed/ or failed/ is a link or not a folder,
// before any of its files is read.
func checkFolders(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	defer root.Close()
	for _, name := range []string{processedDir, failedDir} {
		if _, err := checkFolder(root, name); err != nil {
			return err
		}
	}
	return nil
}

// IgnoredName reports whether a file in the drop folder (or in its failed/) is left alone: a
// name that is never a person's file but a program's while it works, kept there only while it
// does. These are dotfiles (hidden files: .DS_Store, rsync's .name.XXXXXX while it copies,
// LibreOffice's .~lock.name# while a document is open); Office's owner files, ~$name.xlsx,
// while a workbook is open; Windows Explorer's Thumbs.db and desktop.ini; and files still being
// downloaded or copied, renamed when complete: *.tmp, *.part, *.partial, *.crdownload (Chrome),
// *.download (Safari). Every other regular file is taken.
func IgnoredName(name string) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "~$"), lower == "thumbs.db", lower == "desktop.ini":
		return true
	}
	for _, ext := range []string{".tmp", ".part", ".partial", ".crdownload", ".download"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// entryKind is what a pass of the drop folder does with one of its entries (dropEntry).
type entryKind int

const (
	entryLeft     entryKind = iota // a folder, a name IgnoredName leaves alone, or gone since listed
	entryNotAFile                  // a link or another non-regular entry: left alone, said once
	entrySettling                  // changed within the settle period: a later pass takes it
	entryComplete                  // a regular file unchanged for the settle period: taken
)

// dropEntry says what a pass does with ent, an entry of the drop folder, and its information
// (nil for entryLeft). ProcessDir acts on it; Idle asks whether any entry is for a pass.
func dropEntry(ent os.DirEntry, settle time.Duration) (entryKind, os.FileInfo) {
	if ent.IsDir() || IgnoredName(ent.Name()) {
		return entryLeft, nil
	}
	info, err := ent.Info()
	switch {
	case err != nil:
		return entryLeft, nil
	case !info.Mode().IsRegular():
		return entryNotAFile, info
	case time.Since(info.ModTime()) < settle:
		return entrySettling, info
	}
	return entryComplete, info
}

// ProcessDir onboards the complete files in dir: every regular file but those IgnoredName
// leaves alone, unchanged for settle (a file still being written is left for the next pass). A
// file that is not a CSV of new hires (a workbook, UTF-16 text, anything else) is taken too: it
// goes to failed/ with a report saying what it is and how to save it as CSV. A file that ends inside its last row
// (no line ending, or inside a quoted cell) waits until it has been unchanged for another settle
// period, in case its writer is not done: then the rows before go ahead and that row is
// rejected. Each goes to processed/ (or failed/, when a row is unresolved or the file could not
// be read) with its report beside it; a file stopped by a refused key or a canceled run stays
// where it is. What goes there is the file read: one saved again while it was onboarded (a new
// version renamed over it) is filed as read, from the file still open, and the new version
// waits in its place for the next pass; one rewritten in place stays for the next pass, the
// report of the version read in reports/.
func (o *Onboarder) ProcessDir(ctx context.Context, dir string, settle time.Duration) ([]FileResult, error) {
	if err := checkFolders(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	var results []FileResult
	for _, ent := range entries {
		name := ent.Name()
		kind, info := dropEntry(ent, settle)
		if kind == entryNotAFile {
			o.warnOnce(name, "onboarding: an entry of the drop folder is not a regular file (a symbolic link?) and is left alone: hrsync follows no links there; copy the file itself in",
				"file", name, "mode", info.Mode().Type().String())
		}
		if kind != entryComplete {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		r, held, err := o.processPath(ctx, filepath.Join(dir, name), dir, settle)
		if err != nil {
			return results, err
		}
		if !held {
			results = append(results, r)
		}
	}
	return results, nil
}

// FailedFiles lists the files waiting in dir/failed (not their reports, nor the names
// IgnoredName leaves alone), by name.
func FailedFiles(dir string) ([]string, error) {
	if err := checkFolders(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, failedDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	reports := make(map[string]bool, len(entries))
	for _, ent := range entries {
		reports[strings.ToLower(reportPath(ent.Name()))] = true
	}
	var files []string
	for _, ent := range entries {
		name := ent.Name()
		// x.result.csv beside x.csv, or x.xlsx.result.csv beside x.xlsx, is x's report.
		if !ent.Type().IsRegular() || IgnoredName(name) || reports[strings.ToLower(name)] {
			continue
		}
		files = append(files, name)
	}
	return files, nil
}

const (
	processedDir = "processed"
	failedDir    = "failed"
	reportsDir   = "reports"
	reportSuffix = ".result.csv"
)

// ProcessPath onboards one named file; with moveTo set (the drop folder), it moves the file and
// its report into moveTo/processed or moveTo/failed (a file retried from failed/ that is still
// not finished stays there), else it writes the report beside the file, or in Folder/reports
// when the file lies in the drop folder. A dry run, a canceled run or a refused key leaves the
// file where it is. A last row the file ends inside is rejected at once. The folders it makes
// are private (0700) and so are the reports and the files it moves (0600); a processed/,
// failed/ or reports/ folder that is a symbolic link is refused (LinkedFolderError), and nothing
// it does in moveTo follows a link out of it. A file that changed while it was onboarded is
// filed as read, or left for the next pass (see ProcessDir).
func (o *Onboarder) ProcessPath(ctx context.Context, path, moveTo string) (FileResult, error) {
	r, _, err := o.processPath(ctx, path, moveTo, -1)
	return r, err
}

// processPath is ProcessPath; settle, when not negative, is the drop folder's: a file that
// changed within settle when it is opened (saved again since the folder was listed), changes
// while it is read, or ends inside its last row and has not been unchanged for twice settle, is
// left where it is, untouched (held).
func (o *Onboarder) processPath(ctx context.Context, path, moveTo string, settle time.Duration) (r FileResult, held bool, err error) {
	name := filepath.Base(path)
	var root *os.Root // moveTo, when set
	rel := name       // path in root
	if moveTo != "" {
		if rel, err = filepath.Rel(moveTo, path); err != nil || !filepath.IsLocal(rel) {
			return FileResult{Name: name, Err: fmt.Errorf("%s is not in the onboarding folder", name)}, false, fmt.Errorf("read %s: not in the onboarding folder %s", name, moveTo)
		}
		if root, err = os.OpenRoot(moveTo); err != nil {
			return FileResult{Name: name, Err: err}, false, fmt.Errorf("onboarding folder: %w", err)
		}
		defer root.Close()
	}
	var f *os.File
	if root != nil {
		f, err = root.Open(rel)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	if !before.Mode().IsRegular() {
		err := fmt.Errorf("%s is not a regular file", name)
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	if settle >= 0 && time.Since(before.ModTime()) < settle {
		// Saved again since the folder was listed (a new version renamed over it, or written
		// in place): it settles first.
		return FileResult{Name: name}, true, nil
	}
	file, hash, rerr := o.read(f, before.Size())
	if settle >= 0 {
		after, err := f.Stat()
		if err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			o.log.Info("onboarding: a file changed while it was read; it waits for the next pass", "file", name)
			return FileResult{Name: name}, true, nil
		}
		if file.Cut > 0 && time.Since(after.ModTime()) < 2*settle {
			o.log.Info("onboarding: a file ends inside its last row (no line ending, or inside a quoted cell); it waits another settle period in case it is still being written, then that row is rejected",
				"file", name, "line", file.Cut)
			return FileResult{Name: name}, true, nil
		}
	}
	r = o.onboard(ctx, name, hash, file, rerr)
	if !o.opts.DryRun && ctx.Err() == nil {
		o.opts.Metrics.file(r.Outcome())
	}
	stays := o.opts.DryRun || ctx.Err() != nil || errors.Is(r.Err, v1.ErrUnauthorized)
	if moveTo == "" { // a file named on the command line
		r.Report, err = o.writeNamedReport(path, r)
		o.logFile(r, r.Report)
		return r, false, err
	}
	if stays {
		o.logFile(r, "")
		// Nothing is written into the drop folder for a file that stays there: a report
		// there would be taken for a new file on the next pass.
		return r, false, nil
	}
	dest := processedDir
	if r.Failed() {
		dest = failedDir
	}
	from := filepath.Dir(rel)
	// What is filed is the file read, never a version saved since: Excel and sync clients save
	// by writing a new file and renaming it over the old one, other programs rewrite it in
	// place. The version read was sent: its result is kept, and the new one waits in its place
	// for the next pass.
	change := changeOf(root, rel, f, before)
	if change == rewritten {
		return o.reportAside(root, moveTo, r, "rewritten in place")
	}
	if from == dest && change == unchanged { // retried from failed/ and still not finished
		r.movedTo = rel
		r.Report = filepath.Join(moveTo, reportPath(rel))
		o.logFile(r, reportPath(rel))
		return r, false, o.writeReport(root, reportPath(rel), r)
	}
	if err := privateFolderIn(root, dest, o.opts.Access); err != nil {
		return r, false, err
	}
	target := freeName(root, dest, name)
	if change == replaced {
		// Its name is another file's now, or nobody's: what was read is filed from the file
		// still open.
		if err := copyRead(root, f, before, target, o.opts.Access); err != nil {
			return o.reportAside(root, moveTo, r, err.Error())
		}
	}
	r.Report = filepath.Join(moveTo, reportPath(target))
	if err := o.writeReport(root, reportPath(target), r); err != nil {
		return r, false, err
	}
	r.movedTo = target
	o.logFile(r, reportPath(target))
	if change == unchanged {
		// The file keeps its mode when it moves: it is given the results' access first
		// (private by default; on the file opened, so no link is followed). A file of another
		// account's cannot be: processed/ and failed/ are.
		if err := o.opts.Access.apply(f); err != nil {
			o.log.Warn("onboarding: a file's mode or group cannot be set as configured (onboarding.group, onboarding.mode); the folder it moves to has them",
				"file", name, "access", o.opts.Access.String(), "err", err)
		}
		if change, err = moveRead(root, f, rel, target); err != nil {
			return r, false, fmt.Errorf("move %s: %w", name, err)
		}
		// A new version renamed over it as it moved went back: what was read is filed from
		// the file still open, beside its report.
		if change == replaced {
			if err := copyRead(root, f, before, target, o.opts.Access); err != nil {
				return r, false, fmt.Errorf("file %s as it was read: %w", name, err)
			}
		}
	}
	if change == replaced {
		o.log.Info("onboarding: a file changed while it was onboarded (a new version renamed over it, or it was removed): the version read is filed with its report; a new version in its place waits for the next pass",
			"file", name, "filed", target)
	}
	if from == failedDir && from != dest { // finished from failed/: its old report goes
		if err := root.Remove(reportPath(rel)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return r, false, fmt.Errorf("remove the old report of %s: %w", name, err)
		}
	}
	// Filed in processed/ or failed/: whoever dropped it is told (a file retried in failed/
	// and still not finished was told already, when it went there).
	o.opts.Notifier.Notify(r, reportPath(target))
	return r, false, nil
}

// fileChange is how a file of the drop folder changed since it was opened and read.
type fileChange int

const (
	unchanged fileChange = iota // its name names it still, its size and time as read
	replaced                    // its name names another file now (one renamed over it), or none
	rewritten                   // written to since it was read (in place): what was read is gone
)

// changeOf says how the file f, at rel in root and of information before when it was read, has
// changed since.
func changeOf(root *os.Root, rel string, f *os.File, before os.FileInfo) fileChange {
	now, err := f.Stat()
	if err != nil || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		return rewritten
	}
	at, err := root.Lstat(rel)
	if err != nil || !os.SameFile(at, now) {
		return replaced
	}
	return unchanged
}

// moveRead renames rel in root, the file f, to target, and makes sure the file moved is f: one
// renamed over it in between goes back (beside, under a free name, when its name is taken
// again), and it reports replaced.
func moveRead(root *os.Root, f *os.File, rel, target string) (fileChange, error) {
	if err := root.Rename(rel, target); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return replaced, nil // removed in between
		}
		return unchanged, err
	}
	read, err := f.Stat()
	if err != nil {
		return unchanged, err
	}
	moved, err := root.Lstat(target)
	if err == nil && os.SameFile(moved, read) {
		return unchanged, nil
	}
	if err == nil {
		back := rel
		if _, err := root.Lstat(rel); err == nil {
			back = freeName(root, filepath.Dir(rel), filepath.Base(rel))
		}
		if err := root.Rename(target, back); err != nil {
			return replaced, fmt.Errorf("a new version was renamed over the file as it moved, and cannot be put back: %w", err)
		}
	}
	return replaced, nil
}

// errChangedWhileFiled is a file that changed while copyRead copied it.
var errChangedWhileFiled = errors.New("the file changed while it was filed")

// copyRead writes to target in root, with access, what the open file f holds, unchanged since
// before: the version read of a file whose name is another's now.
func copyRead(root *os.Root, f *os.File, before os.FileInfo, target string, access Access) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return writePrivate(root, target, access, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(f, before.Size()+1))
		if err != nil {
			return err
		}
		now, err := f.Stat()
		if err != nil {
			return err
		}
		if n != before.Size() || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
			return errChangedWhileFiled
		}
		return nil
	})
}

// reportAside writes the report of a file that changed while it was onboarded, and whose
// version read cannot be filed (how says why: rewritten in place, or what its copy met), into
// the drop folder's reports/, and leaves the file as it is now for the next pass.
func (o *Onboarder) reportAside(root *os.Root, moveTo string, r FileResult, how string) (FileResult, bool, error) {
	if err := privateFolderIn(root, reportsDir, o.opts.Access); err != nil {
		return r, false, err
	}
	report := reportPath(freeName(root, reportsDir, r.Name))
	r.Report = filepath.Join(moveTo, report)
	if err := o.writeReport(root, report, r); err != nil {
		return r, false, err
	}
	o.logFile(r, report)
	o.log.Info("onboarding: a file changed while it was onboarded: the version read cannot be filed, its report is in reports/; the file as it is now waits for the next pass",
		"file", r.Name, "how", how, "report", report)
	return r, false, nil
}

// freeName is where a file named name goes in dest: dest/name, or, when that or its report is
// taken (the same name dropped before), dest/name with the time before its extension.
func freeName(root *os.Root, dest, name string) string {
	free := func(p string) bool {
		_, err1 := root.Lstat(p)
		_, err2 := root.Lstat(reportPath(p))
		return errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist)
	}
	target := filepath.Join(dest, name)
	stem, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
	stamp := time.Now().UTC().Format("20060102T150405")
	for i := 1; !free(target) && i < 1000; i++ {
		if i == 1 {
			target = filepath.Join(dest, stem+"."+stamp+ext)
		} else {
			target = filepath.Join(dest, fmt.Sprintf("%s.%s-%d%s", stem, stamp, i, ext))
		}
	}
	return target
}

// sameDir reports whether a and b name the same existing folder.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}
