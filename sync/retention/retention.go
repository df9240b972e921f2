package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
)

// The rules' names: in the configuration (retention.<name>), in the erasures' cause
// (sink.ErasureCauseRetention + name), in the metrics and the command's output.
const (
	RuleSicknessDetails = "sickness_details"
	RuleOnboardingFiles = "onboarding_files"
)

// LeaverClasses are the classes a leavers rule can be set for, in the order they are applied.
var LeaverClasses = []v1.Class{v1.Identifying, v1.FreeText, v1.Financial, v1.Health}

// LeaverRule is the name of the leavers rule for class c: "leavers.identifying".
func LeaverRule(c v1.Class) string { return "leavers." + c.String() }

// Rules are an account's retention rules (the configuration's retention section): a zero Period
// is no rule, kept for ever. The zero Rules erase nothing.
type Rules struct {
	// Leavers are, per class, how long after a leaver's leaving date (sink.Leavers) their
	// values of that class are kept.
	Leavers map[v1.Class]Period
	// SicknessDetails is how long after a sickness ended (its end_date, else its start_date)
	// its health members are kept, the person a leaver or not.
	SicknessDetails Period
	// OnboardingFiles is how long the files of the onboarding folder's processed/, failed/ and
	// reports/ (by their modification time) and the onboarding ledger's rows (by their last
	// change) are kept. A folder of these that is a symbolic link is never followed.
	OnboardingFiles Period
	// OnboardingDir is the onboarding folder; "" has no files to delete.
	OnboardingDir string
}

// Any reports whether any rule is set.
func (r Rules) Any() bool {
	for _, p := range r.Leavers {
		if !p.IsZero() {
			return true
		}
	}
	return !r.SicknessDetails.IsZero() || !r.OnboardingFiles.IsZero()
}

// Describe says each rule set, in order: "leavers.identifying: 6y after leaving".
func (r Rules) Describe() []string {
	var out []string
	for _, name := range r.names() {
		out = append(out, name+": "+r.Says(name))
	}
	return out
}

// names are the rules set, in order.
func (r Rules) names() []string {
	var out []string
	for _, c := range LeaverClasses {
		if !r.Leavers[c].IsZero() {
			out = append(out, LeaverRule(c))
		}
	}
	if !r.SicknessDetails.IsZero() {
		out = append(out, RuleSicknessDetails)
	}
	if !r.OnboardingFiles.IsZero() {
		out = append(out, RuleOnboardingFiles)
	}
	return out
}

// Says is what the rule named keeps: "6y after leaving", "1y after it ended", "30d"; "" when it
// is not set.
func (r Rules) Says(rule string) string {
	switch {
	case rule == RuleSicknessDetails && !r.SicknessDetails.IsZero():
		return r.SicknessDetails.String() + " after it ended"
	case rule == RuleOnboardingFiles && !r.OnboardingFiles.IsZero():
		return r.OnboardingFiles.String() + " after the file's last change"
	}
	for _, c := range LeaverClasses {
		if rule == LeaverRule(c) && !r.Leavers[c].IsZero() {
			return r.Leavers[c].String() + " after leaving"
		}
	}
	return ""
}

// Due is what one rule has due.
type Due struct {
	// Rule is the rule's name; Classes what it erases (none for the files).
	Rule    string
	Classes []v1.Class
	// Employees are the leavers due (a leavers rule), Sicknesses the sicknesses due
	// (sickness_details); Files the onboarding files due and OnboardingBefore the cut of the
	// ledger's rows (onboarding_files).
	Employees        []int64
	Sicknesses       []int64
	Files            []string
	OnboardingBefore time.Time
	// Refused are the onboarding folder's processed/, failed/ and reports/ that are symbolic
	// links, or not folders (LinkedFolderError): nothing in them is due, nor deleted.
	Refused []*onboard.LinkedFolderError
}

// A Plan is what is due at Now, rule by rule, in the rules' order.
type Plan struct {
	Now time.Time
	Due []Due
}

// Store is what retention needs of the warehouse; *sink.Store is one.
type Store interface {
	Leavers(ctx context.Context, now time.Time) ([]sink.Leaver, error)
	Erasures(ctx context.Context) ([]sink.Erasure, error)
	SicknessesEndedBefore(ctx context.Context, day time.Time) ([]sink.SicknessRef, error)
	EraseBatches(ctx context.Context, batches []sink.ErasureBatch, opts sink.EraseOptions) ([]sink.ErasureResult, error)
	EraseOnboardingRows(ctx context.Context, cut time.Time, cause string, dry bool) (int64, error)
	LogRetentionRun(ctx context.Context, counts map[string]int64) error
}

// MakePlan is what is due at now under rules: per leavers rule, the leavers whose leaving date
// plus the rule's period has passed, less those whose class is already erased by an erasure of
// them in force (sink.Store.Erasures; a lifted one no longer counts, so the rule applies
// again); the sicknesses ended before now less the period, less those already erased for
// health; the onboarding files modified before now less the period.
func MakePlan(ctx context.Context, store Store, rules Rules, now time.Time) (Plan, error) {
	plan := Plan{Now: now}
	if !rules.Any() {
		return plan, nil
	}
	var leaversSet bool
	for _, c := range LeaverClasses {
		leaversSet = leaversSet || !rules.Leavers[c].IsZero()
	}
	if leaversSet {
		leavers, err := store.Leavers(ctx, now)
		if err != nil {
			return Plan{}, err
		}
		erasures, err := store.Erasures(ctx)
		if err != nil {
			return Plan{}, err
		}
		erased := map[int64][]v1.Class{}
		for _, e := range erasures {
			if e.Kind == sink.ErasureEmployee && e.LiftedAt == "" {
				erased[e.SubjectID] = append(erased[e.SubjectID], e.Classes...)
			}
		}
		for _, c := range LeaverClasses {
			p := rules.Leavers[c]
			if p.IsZero() {
				continue
			}
			d := Due{Rule: LeaverRule(c), Classes: []v1.Class{c}}
			for _, l := range leavers {
				if !p.From(l.Left).After(now) && !slices.Contains(erased[l.EmployeeID], c) {
					d.Employees = append(d.Employees, l.EmployeeID)
				}
			}
			plan.Due = append(plan.Due, d)
		}
	}
	if p := rules.SicknessDetails; !p.IsZero() {
		found, err := store.SicknessesEndedBefore(ctx, before(p, now))
		if err != nil {
			return Plan{}, err
		}
		// The sicknesses of the leavers whose health this plan erases go with them.
		healthDue := map[int64]bool{}
		for _, d := range plan.Due {
			if slices.Contains(d.Classes, v1.Health) {
				for _, id := range d.Employees {
					healthDue[id] = true
				}
			}
		}
		d := Due{Rule: RuleSicknessDetails, Classes: []v1.Class{v1.Health}}
		for _, r := range found {
			if !healthDue[r.EmployeeID] {
				d.Sicknesses = append(d.Sicknesses, r.ID)
			}
		}
		plan.Due = append(plan.Due, d)
	}
	if p := rules.OnboardingFiles; !p.IsZero() {
		d := Due{Rule: RuleOnboardingFiles, OnboardingBefore: before(p, now)}
		if rules.OnboardingDir != "" {
			files, refused, err := oldFiles(rules.OnboardingDir, d.OnboardingBefore)
			if err != nil {
				return Plan{}, err
			}
			d.Files, d.Refused = files, refused
		}
		plan.Due = append(plan.Due, d)
	}
	return plan, nil
}

// before is the moment p before now: what ended earlier is past the period.
func before(p Period, now time.Time) time.Time {
	return now.AddDate(-p.Years, -p.Months, -p.Days)
}

// oldFiles are the regular .csv files of dir's processed/, failed/ and reports/ last modified
// before cut; refused are the folders among them that are links, or not folders (onboard.OpenFolder).
func oldFiles(dir string, cut time.Time) (files []string, refused []*onboard.LinkedFolderError, err error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("retention: onboarding files: %w", err)
	}
	defer root.Close()
	for _, sub := range onboard.Folders {
		folder, err := onboard.OpenFolder(root, sub)
		var linked *onboard.LinkedFolderError
		if errors.As(err, &linked) {
			refused = append(refused, linked)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("retention: onboarding files: %w", err)
		}
		if folder == nil {
			continue
		}
		names, err := csvFiles(folder, cut)
		folder.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("retention: onboarding files: %w", err)
		}
		for _, name := range names {
			files = append(files, filepath.Join(dir, sub, name))
		}
	}
	return files, refused, nil
}

// csvFiles are the names of the regular .csv files of folder last modified before cut.
func csvFiles(folder *os.Root, cut time.Time) ([]string, error) {
	f, err := folder.Open(".")
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(strings.ToLower(e.Name()), ".csv") {
			continue
		}
		info, err := folder.Lstat(e.Name())
		if err != nil || !info.Mode().IsRegular() {
			continue // gone, or replaced, meanwhile
		}
		if info.ModTime().Before(cut) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// removeFiles deletes the files of dir's folders named (paths oldFiles listed), each in the
// folder onboard.OpenFolder opens again: a folder made a link since is refused (its files are not
// deleted), and a file made a link since is removed, not followed. deleted is told of each file
// deleted.
func removeFiles(dir string, files []string, deleted func(path string)) (refused []*onboard.LinkedFolderError, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("retention: delete an onboarding file: %w", err)
	}
	defer root.Close()
	folders := map[string]*os.Root{}
	defer func() {
		for _, f := range folders {
			if f != nil {
				f.Close()
			}
		}
	}()
	for _, path := range files {
		sub, name := filepath.Base(filepath.Dir(path)), filepath.Base(path)
		folder, opened := folders[sub]
		if !opened {
			folder, err = onboard.OpenFolder(root, sub)
			var linked *onboard.LinkedFolderError
			if errors.As(err, &linked) {
				refused = append(refused, linked)
			} else if err != nil {
				return refused, fmt.Errorf("retention: delete an onboarding file: %w", err)
			}
			folders[sub] = folder
		}
		if folder == nil {
			continue
		}
		if err := folder.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return refused, fmt.Errorf("retention: delete an onboarding file: %w", err)
		}
		deleted(path)
	}
	return refused, nil
}

// RuleResult is what one rule erased (or, in a dry run, would have).
type RuleResult struct {
	Rule    string
	Classes []v1.Class
	// Subjects is how many people (leavers), records (sicknesses) or ledger rows and files
	// (onboarding) it took; What names them.
	Subjects int
	What     string
	// Files is how many onboarding files were deleted (would be).
	Files int
	// Rows are the rows changed per table.
	Rows map[string]int64
}

// Result is what a run did.
type Result struct {
	DryRun bool
	Rules  []RuleResult
}

// Erased is how many subjects the run erased.
func (r Result) Erased() int {
	n := 0
	for _, rr := range r.Rules {
		n += rr.Subjects + rr.Files
	}
	return n
}

// Options shape a Run.
type Options struct {
	// DryRun changes nothing: the erasures are made in a transaction rolled back, the files are
	// only listed, and nothing is logged but an onboarding folder refused (LinkedFolderError, at
	// WARN); the result says what a run would do.
	DryRun bool
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Run applies rules once: it plans what is due (MakePlan), erases the leavers' classes and the
// sicknesses' health members in one transaction, one batch (and one erasure_log entry) per rule,
// then scrubs the warehouse once; erases the old onboarding ledger rows; deletes the old
// onboarding files; and, last, writes the run's erasure_log entry (sink.RetentionRunCause), even
// when nothing was due, so that the last successful run is known. A rule with nothing due
// changes and scrubs nothing: a second run erases nothing new.
func Run(ctx context.Context, store Store, rules Rules, opts Options) (Result, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := Result{DryRun: opts.DryRun}
	plan, err := MakePlan(ctx, store, rules, now().UTC())
	if err != nil {
		return res, fmt.Errorf("retention: %w", err)
	}
	var batches []sink.ErasureBatch
	var batched []int // indexes in res.Rules
	for _, d := range plan.Due {
		rr := RuleResult{Rule: d.Rule, Classes: d.Classes, Rows: map[string]int64{}}
		cause := sink.ErasureCauseRetention + d.Rule
		switch {
		case len(d.Employees) > 0:
			rr.What, rr.Subjects = "people", len(d.Employees)
			batches = append(batches, sink.ErasureBatch{Kind: sink.ErasureEmployee, IDs: d.Employees, Classes: d.Classes, Cause: cause})
			batched = append(batched, len(res.Rules))
		case len(d.Sicknesses) > 0:
			rr.What, rr.Subjects = "sicknesses", len(d.Sicknesses)
			batches = append(batches, sink.ErasureBatch{Kind: sink.ErasureRecord, Collection: "sicknesses", IDs: d.Sicknesses, Classes: d.Classes, Cause: cause})
			batched = append(batched, len(res.Rules))
		case d.Rule == RuleSicknessDetails:
			rr.What = "sicknesses"
		case d.Rule == RuleOnboardingFiles:
			rr.What = "onboarding rows"
		default:
			rr.What = "people"
		}
		res.Rules = append(res.Rules, rr)
	}
	if len(batches) > 0 {
		results, err := store.EraseBatches(ctx, batches, sink.EraseOptions{DryRun: opts.DryRun})
		if err != nil {
			return res, fmt.Errorf("retention: %w", err)
		}
		for i, r := range results {
			res.Rules[batched[i]].Rows = r.Rows
		}
	}
	for i, d := range plan.Due {
		if d.Rule != RuleOnboardingFiles {
			continue
		}
		rr := &res.Rules[i]
		n, err := store.EraseOnboardingRows(ctx, d.OnboardingBefore, sink.ErasureCauseRetention+d.Rule, opts.DryRun)
		if err != nil {
			return res, fmt.Errorf("retention: %w", err)
		}
		rr.Subjects = int(n)
		if n > 0 {
			rr.Rows["onboarding_rows"] = n
		}
		refused := d.Refused
		if opts.DryRun {
			rr.Files = len(d.Files)
		} else if len(d.Files) > 0 {
			more, err := removeFiles(rules.OnboardingDir, d.Files, func(f string) {
				log.Info("retention: deleted an onboarding file", "rule", d.Rule, "file", filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f)))
				rr.Files++
			})
			refused = append(refused, more...)
			if err != nil {
				return res, err
			}
		}
		for _, linked := range refused {
			log.Warn("retention: an onboarding folder is a symbolic link, or not a folder: nothing in it is deleted; make it a real folder (onboarding refuses it too)",
				"rule", d.Rule, "folder", linked.Path, "link", linked.Link)
		}
	}
	if opts.DryRun {
		return res, nil
	}
	counts := map[string]int64{}
	for _, rr := range res.Rules {
		counts[rr.Rule] = int64(rr.Subjects)
		if rr.Files > 0 {
			counts[rr.Rule+".files"] = int64(rr.Files)
		}
	}
	if err := store.LogRetentionRun(ctx, counts); err != nil {
		return res, fmt.Errorf("retention: %w", err)
	}
	for _, rr := range res.Rules {
		if rr.Subjects > 0 || rr.Files > 0 {
			log.Info("retention: erased", "rule", rr.Rule, rr.What, rr.Subjects, "files", rr.Files)
		}
	}
	return res, nil
}
