// Package demo is `hrsync demo`: the whole product in one process, with nothing to set up. An
// upstream serving a generated account (package fakeupstream, on a real port): employees, a year
// of their absences, sicknesses, leave requests and training courses, and the reference data
// they point at. A sync of every collection into a warehouse of the demo's own, an onboarding of
// a CSV through the upstream, a second sync, a report, and the replica left serving until
// Ctrl-C. Every step is the code the real commands run (their client, the Syncer, their
// Onboarder, their /v1 interface, given to Run as a Wiring); only the upstream is a stand-in.
package demo

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/hrreport"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/syncreport"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/walk"
)

// builtinHires is deploy/examples/new-hires.csv, for a binary run outside the repository; a test
// keeps the two the same.
//
//go:generate cp ../../../../deploy/examples/new-hires.csv new-hires.csv
//go:embed new-hires.csv
var builtinHires []byte

// The defaults of the demo's flags.
const (
	// Employees is how many employees the in-process upstream serves.
	Employees = 2500
	// Addr is where the replica listens (when it is taken, another free port of its host).
	Addr = "127.0.0.1:8080"
	// HiresPath is the CSV onboarded, from the repository (when absent, the built-in copy).
	HiresPath = "deploy/examples/new-hires.csv"
	// WarehouseFile is the demo's SQLite warehouse, unless warehouse.url is Postgres.
	WarehouseFile = "hrsync-demo.db"
	// Schema is the demo's schema of a Postgres warehouse.
	Schema = "hrsync_demo"
)

const (
	demoSeed         = 42 // of the generated employees; deploy/examples/new-hires.csv names one of them
	demoAccountID    = 77 // the generated records' account, given to created ones too
	demoMaxEmployees = 1_000_000
	demoMaxRowsShown = 20
	// demoAbsenceYears of events are generated: enough for a year's report, few enough pages
	// (about 300 for 2,500 employees) that the demo stays quick.
	demoAbsenceYears = 1

	// realRateLimit is the real service's budget, requests a minute (UPSTREAM.md).
	realRateLimit = 60
)

// demoResync are the collections the demo's second sync walks: those onboarding writes to.
var demoResync = []sink.Resource{sink.WorkingPatterns, sink.Employees}

// Options are the demo's flags (hrsync demo's).
type Options struct {
	// Employees the in-process upstream serves.
	Employees int
	// Addr is where the replica listens at the end.
	Addr string
	// UpstreamAddr is where the in-process upstream listens (port 0: any free port).
	UpstreamAddr string
	// Hires is the CSV of new hires to onboard.
	Hires string
	// Warehouse is the demo's own warehouse: a SQLite file or a postgres:// URL; "": the default.
	Warehouse string
	// NoServe exits after the report instead of serving the replica.
	NoServe bool
	// Set holds the names of the flags given on the command line: a default that cannot be
	// used gives way, a choice does not.
	Set map[string]bool
	// Schema is the Postgres schema of the demo's warehouse (Schema when ""; tests use their own).
	Schema string
	// Version is hrsync's, which the subject-access export names.
	Version string
}

// Wiring is what the demo runs of the hrsync commands, so that each of its steps is theirs.
type Wiring struct {
	// Client is the account's source client as the commands build it, without a shared budget
	// (the demo's upstream is unpaced).
	Client func(a *config.Account, log *slog.Logger) (*client.Client, error)
	// Onboarder is the account's onboarder as hrsync onboard builds it.
	Onboarder func(a *config.Account, src *client.Client, store *sink.Store, log *slog.Logger) *onboard.Onboarder
	// Replica is the /v1 interface, with its health endpoints, of cfg's one account's warehouse
	// as hrsync serve builds it; creates are forwarded through upstream when it is not nil.
	Replica func(cfg config.Settings, store *sink.Store, upstream *client.Client, log *slog.Logger) (http.Handler, error)
	// OnboardSummary writes an onboarding's summary line as hrsync onboard prints it.
	OnboardSummary func(w io.Writer, f onboard.FileResult)
}

// UsageError is a demo command line the demo cannot act on (hrsync exits 2).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Run runs the demo with the flags f, each step through wire. With f.NoServe it returns once
// the report is written; otherwise it serves the replica until ctx ends. Stopped early (ctx
// ended before the replica was up), it returns nil.
func Run(ctx context.Context, cfg config.Settings, f Options, wire Wiring, stdout, stderr io.Writer) error {
	err := run(ctx, cfg, f, wire, stdout, stderr)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C before the replica was up: stopping is what was asked. The next run starts over.
		cfg.Logger(stderr).Info("demo stopped", "err", err)
		return nil
	}
	return err
}

func run(ctx context.Context, cfg config.Settings, f Options, wire Wiring, stdout, stderr io.Writer) error {
	if f.Employees < 1 || f.Employees > demoMaxEmployees {
		return &UsageError{fmt.Sprintf("demo: --employees %d: want 1 to %d", f.Employees, demoMaxEmployees)}
	}
	if f.Schema == "" {
		f.Schema = Schema
	}
	log := cfg.Logger(stderr)
	began := time.Now()
	hiresName, hiresFrom, hires, err := demoHires(f)
	if err != nil {
		return err
	}
	wh, err := demoWarehouse(cfg.Config, f)
	if err != nil {
		return err
	}
	// The replica's port first: a port that is taken says so before anything else runs.
	var replica net.Listener
	var addrNote string
	if !f.NoServe {
		if replica, addrNote, err = listenReplica(f); err != nil {
			return err
		}
		defer replica.Close() // closed already once served; here for the early returns
	}
	w := &demoWriter{w: stdout, summary: wire.OnboardSummary}
	w.line("hrsync demo: an upstream, a warehouse, an onboarding and a replica, all in this process;")
	w.line("nothing is read from or sent to a real service.")
	w.line("")

	// 1. The upstream.
	ln, err := net.Listen("tcp", f.UpstreamAddr)
	if err != nil {
		return fmt.Errorf("demo: upstream: listen on %s: %w", f.UpstreamAddr, err)
	}
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: f.Employees, Seed: demoSeed, AbsenceYears: demoAbsenceYears})
	uopts := acct.Options()
	uopts.APIKey, uopts.AccountID = config.NewAPIKey("demo-upstream-"), demoAccountID
	up := fakeupstream.Start(ln, uopts)
	defer up.Close() // last: after the replica and the warehouse
	today := fakeupstream.Today()
	w.step("1. Upstream", "%s/v1 serves %s generated employees: names with accents, departments,", up.URL, syncreport.Thousands(int64(f.Employees)))
	w.more("managers on other pages (some not listed at all), %d working patterns (one of zero hours),",
		len(acct.WorkingPatterns))
	w.more("leavers with their leaving dates, a few starting soon; their %s absences,",
		syncreport.Thousands(int64(len(acct.Collections["absences"]))))
	w.more("%s leave requests, %s sicknesses and %s training courses of the year to %s (and",
		syncreport.Thousands(int64(len(acct.Collections["leave_requests"]))), syncreport.Thousands(int64(len(acct.Collections["sicknesses"]))),
		syncreport.Thousands(int64(len(acct.Collections["employee_training_courses"]))), today.Format("2 January 2006"))
	w.more("bookings half a year on), the reference data they point at, and their pay (the financial")
	w.more("module: %s salaries, %s bonuses, %s benefits); unpaced for the demo", syncreport.Thousands(int64(len(acct.Collections["salaries"]))),
		syncreport.Thousands(int64(len(acct.Collections["bonuses"]))), syncreport.Thousands(int64(len(acct.Collections["benefits"]))))

	// 2. The warehouse.
	t := time.Now()
	store, err := openDemoWarehouse(ctx, wh, f.Schema, log)
	if err != nil {
		return err
	}
	defer store.Close()
	w.step("2. Warehouse", "%s, made fresh (%s)", wh.describe(f.Schema), time.Since(t).Round(time.Millisecond))
	if note := wh.untouched(cfg.Config, f.Schema); note != "" {
		w.more("%s", note)
	}

	// The client every step shares, as a process of hrsync does: one budget for the account.
	// The demo's one account: the configuration's first, with the stand-in upstream as source.
	da := *cfg.Accounts[0]
	da.Source = config.SourceConfig{URL: up.URL + "/v1", APIKey: up.APIKey(), RateLimit: 0}
	demoPersonalData(&da.PersonalData)
	// Its replica is one of that upstream's, as any other: creates are forwarded to it unless
	// serve.writes says otherwise.
	da.ResolveWrites(cfg.Writes)
	src, err := wire.Client(&da, log) // unpaced: no budget to share
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	sopts := da.WalkOptions()
	sopts.Logger, sopts.Window = log, nil // the demo walks every collection whole

	// 3. The first sync, of every collection hrsync knows (the reference data before the events
	// that point at it). A new warehouse holds one default working pattern and allowance, which
	// the source does not list: the sync retires them, exactly as a first `hrsync sync` does,
	// which is no deletion of the source's records (none is reported deleted).
	t = time.Now()
	sync1, err := walk.New(src, store, sopts).Run(ctx, walk.Known)
	if err != nil {
		return fmt.Errorf("demo: sync: %w", err)
	}
	w.step("3. Sync", "every page of all %d collections into the warehouse (%s)", len(walk.Known), time.Since(t).Round(time.Millisecond))
	w.more("(the financial module too, which hrsync sync walks only when sync.resources names it)")
	w.results(sync1)

	// 4. Onboarding, through the upstream.
	t = time.Now()
	o := wire.Onboarder(&da, src, store, log)
	file := o.ProcessFile(ctx, hiresName, hires)
	if file.Err != nil {
		return fmt.Errorf("demo: onboarding %s: %w", hiresFrom, file.Err)
	}
	w.step("4. Onboarding", "%s, each row created in the upstream (%s)", hiresFrom, time.Since(t).Round(time.Millisecond))
	w.file(file)
	created := count(file, onboard.OutcomeCreated)
	if created > 0 {
		w.more("Each created employee went into the warehouse at once, from the upstream's answer.")
	}

	// 5. The second sync: of the collections onboarding wrote to. The events are unchanged, and
	// walking them again would double the demo's time to show nothing new.
	t = time.Now()
	sync2, err := walk.New(src, store, sopts).Run(ctx, demoResync)
	if err != nil {
		return fmt.Errorf("demo: second sync: %w", err)
	}
	w.step("5. Sync again", "working patterns and employees, which onboarding wrote to (%s)", time.Since(t).Round(time.Millisecond))
	w.results(sync2)
	e1, e2 := result(sync1, sink.Employees), result(sync2, sink.Employees)
	switch grew := e2.DistinctRecords - e1.DistinctRecords; {
	case grew > 0 && e2.Inserted == 0 && e2.Updated == 0:
		w.more("The upstream now lists %s employees, %d more: the new hires, found just as onboarding stored them.",
			syncreport.Thousands(e2.DistinctRecords), grew)
	case grew > 0:
		w.more("The upstream now lists %s employees, %d more: %d new to the warehouse, %d changed.",
			syncreport.Thousands(e2.DistinctRecords), grew, e2.Inserted, e2.Updated)
	}

	// 6. Personal data: a leaver asks for what is held about them, then to be erased.
	if err := personalData(ctx, &da, store, wh, f.Version, w); err != nil {
		return err
	}

	requests := up.NumRequests()
	w.line("")
	w.line("Done in %s: %d requests to the upstream. A real account allows %d requests a minute, and",
		time.Since(began).Round(100*time.Millisecond), requests, realRateLimit)
	w.line("hrsync paces itself to that: against the real service this run would take about %s.",
		aboutDuration(syncreport.Paced(requests, realRateLimit)))

	// The example query, and its answer: the command prints headcountByDepartmentQuery, which
	// headcountByDepartment runs, on the generated data's today.
	w.line("")
	w.line("Query the warehouse (%s; this is its answer): the headcount by department on %s,", wh.shellName(), today.Format("2 January 2006"))
	w.line("the people employed that day as the people models count them (docs/models.md):")
	w.line("  %s", wh.command(f.Schema, headcountByDepartmentQuery(today.Format(time.DateOnly))))
	counts, err := headcountByDepartment(ctx, store, today)
	if err != nil {
		return fmt.Errorf("demo: example query: %w", err)
	}
	w.headcount(counts)

	// The year's absences, by department: the data's year, which the generated events cover.
	year := today.Year()
	w.line("")
	w.line("Days of absence by department this year (%d: the generated data's today is %s),", year, today.Format("2 January 2006"))
	w.line("the absences starting in it that were not cancelled, in days as deducted:")
	w.line("  %s", wh.command(f.Schema, absenceDaysQuery(year)))
	absence, err := absenceDaysByDepartment(ctx, store, year)
	if err != nil {
		return fmt.Errorf("demo: absence query: %w", err)
	}
	w.absenceDays(absence)

	// The pictures: hrsync report's page, as of the generated data's today.
	page, err := peopleReport(ctx, store, wh, today, f.Version)
	if err != nil {
		return err
	}
	w.line("")
	w.line("The people report (hrsync report: headcount, starters and leavers, absence, Bradford): %s", page)

	if f.NoServe {
		w.line("")
		w.line("Not serving (--no-serve). To serve this warehouse as /v1:")
		w.line("  %s %s serve", wh.serveEnv(f.Schema), self())
		return w.err
	}
	dcfg := cfg
	dcfg.Accounts = []*config.Account{&da}
	return serveDemo(ctx, dcfg, wire, store, src, replica, addrNote, sampleID(file, up), w, log)
}

// demoPersonalData gives the demo's account the statements a data protection officer writes in
// personal_data (why the data is held, on what basis, who receives it), where the configuration
// states none, each marked as an example: the subject-access document the demo writes is then
// whole, as a deployment's is.
func demoPersonalData(pd *config.PersonalDataConfig) {
	if len(pd.Purposes) == 0 {
		pd.Purposes = []string{"Payroll and HR administration (example)", "Managing absence and sickness (example)"}
	}
	if len(pd.LawfulBasis) == 0 {
		pd.LawfulBasis = []string{"Contract of employment, UK GDPR Art. 6(1)(b) (example)",
			"Health data: obligations of employment law, Art. 9(2)(b) (example)"}
	}
	if len(pd.Recipients) == 0 {
		pd.Recipients = []string{"A payroll provider (example)"}
	}
}

// personalData is the demo's step 6: the first leaver in the warehouse asks for everything it
// holds about them (hrsync subject-access, written beside a SQLite warehouse, in the temporary
// folder for a Postgres one, replacing the previous run's) and then to be erased (hrsync erase:
// every erasable class, everywhere, history included; kept erased by every later sync). The
// requests are local: the upstream is not asked.
func personalData(ctx context.Context, a *config.Account, store *sink.Store, wh demoWarehouseSpec, version string, w *demoWriter) error {
	t := time.Now()
	leavers, err := store.Leavers(ctx, t)
	if err != nil {
		return fmt.Errorf("demo: leavers: %w", err)
	}
	if len(leavers) == 0 {
		w.step("6. Privacy", "no leaver among these employees to show a subject access and an erasure on")
		return nil
	}
	id := leavers[0].EmployeeID
	x, err := store.SubjectAccess(ctx, id)
	if err != nil {
		return fmt.Errorf("demo: subject access: %w", err)
	}
	erasures, err := store.Erasures(ctx)
	if err != nil {
		return fmt.Errorf("demo: subject access: %w", err)
	}
	doc := personal.NewSubject(personal.SubjectInput{Account: a, Export: x, Erasures: erasures, Left: leavers[0].Left, Now: t, Version: version})
	dir := os.TempDir()
	if !wh.schemas {
		dir = filepath.Dir(absPath(wh.url))
	}
	ex := personal.NewExport(dir, id)
	if err := ex.Write(doc, true); err != nil {
		return fmt.Errorf("demo: subject access: %w", err)
	}
	res, err := store.EraseEmployee(ctx, id, nil, "hrsync demo: a leaver asked to be erased")
	if err != nil {
		return fmt.Errorf("demo: erase: %w", err)
	}
	var rows, tables int64
	for table, n := range res.Rows {
		if table != "erasures" && n > 0 { // the erasure's own record is not a row erased
			rows += n
			tables++
		}
	}
	paths := ex.Paths()
	records := 0
	for _, c := range doc.Categories {
		records += len(c.Records)
	}
	w.step("6. Privacy", "employee %d, a leaver, asked for what is held about them, then to be erased (%s)",
		id, time.Since(t).Round(time.Millisecond))
	w.more("subject access: %s (to read and print; .json and .csv beside it, files 0600): %s in %s",
		paths[0], syncreport.Plural(int64(records), "record"), categories(len(doc.Categories)))
	w.more("erased: their names, email, notes, sickness details and pay, %s in %d tables, history",
		syncreport.Plural(rows, "row"), tables)
	w.more("included; their department, dates and days stay, and later syncs keep them erased (hrsync erase --list)")
	return nil
}

// categories is n categories, in the singular for one.
func categories(n int) string {
	if n == 1 {
		return "1 category"
	}
	return strconv.Itoa(n) + " categories"
}

// ReportName is the file name of the demo's people report.
const ReportName = "hrsync-report.html"

// peopleReport writes hrsync report's page of the demo's warehouse as of asOf (the last 24
// months, ids and departments only) beside a SQLite warehouse, in the temporary folder for a
// Postgres one, replacing the previous run's, and returns its path.
func peopleReport(ctx context.Context, store *sink.Store, wh demoWarehouseSpec, asOf time.Time, version string) (string, error) {
	r, err := store.PeopleReport(ctx, reportOptions(asOf))
	if err != nil {
		return "", fmt.Errorf("demo: report: %w", err)
	}
	dir := os.TempDir()
	if !wh.schemas {
		dir = filepath.Dir(absPath(wh.url))
	}
	path := filepath.Join(dir, ReportName)
	if err := hrreport.WriteFile(path, r, hrreport.Options{Generated: time.Now(), Version: version}); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	return path, nil
}

// reportOptions are the demo's people report's: as of asOf, the last 24 months, the top 20 of
// the Bradford list.
func reportOptions(asOf time.Time) sink.PeopleReportOptions {
	return sink.PeopleReportOptions{AsOf: asOf, Months: 24, BradfordTop: 20}
}

// serveDemo serves the replica on ln until ctx ends, after checking that it answers and printing
// commands to try; the store is closed by the caller, after the server has shut down. Its
// creates go as the account's serve.writes says: by default forwarded to the in-process
// upstream through src, as a replica of a real source forwards them.
func serveDemo(ctx context.Context, cfg config.Settings, wire Wiring, store *sink.Store, src *client.Client, ln net.Listener, addrNote string, sampleID int64, w *demoWriter, log *slog.Logger) error {
	key := config.NewAPIKey("demo-")
	cfg.Serve.APIKeys, cfg.Serve.Keys = []string{key}, nil
	cfg.Serve.PublicURL, cfg.PublicURL = "", nil
	var upstream *client.Client
	if cfg.Accounts[0].Writes == server.WritesForward {
		upstream = src
	}
	mux, err := wire.Replica(cfg, store, upstream, log)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- httpserve.ServeOn(sctx, log, ln, httpserve.Server{Name: "replica", Handler: mux, Attrs: []slog.Attr{slog.String("warehouse", store.Location())}})
	}()
	base := "http://" + reachable(ln.Addr())
	page := base + "/v1/employees?per_page=2"
	etag, err := probe(ctx, page, key)
	if err != nil {
		stop()
		<-served
		return fmt.Errorf("demo: the replica does not answer: %w", err)
	}
	h := "-H 'X-API-KEY: " + key + "'"
	w.line("")
	w.line("The replica: the warehouse served as /v1 at %s/v1, with no rate limit.", base)
	if addrNote != "" {
		w.line("(%s)", addrNote)
	}
	w.line("Its API key is %s, made for this run. Try:", key)
	w.line("  curl -s %s '%s'", h, page)
	w.line("  curl -s %s %s/v1/employees/%d", h, base, sampleID)
	w.line("  curl -s %s %s/v1/working_patterns", h, base)
	w.line("  curl -s %s %s/v1/departments", h, base)
	w.line("  curl -si %s '%s&page=3'   # headers: Total, Link, ETag", h, page)
	w.line("  curl -si %s -H 'If-None-Match: %s' '%s'   # 304 while nothing changes", h, etag, page)
	w.line("Serving until Ctrl-C.")
	if w.err != nil {
		log.Warn("demo: writing the report", "err", w.err)
	}
	return <-served
}

// demoHires is the CSV to onboard: --hires when given; else deploy/examples/new-hires.csv when
// it is there (the demo run from the repository); else the built-in copy of it. from says which.
func demoHires(f Options) (name, from string, data []byte, err error) {
	data, err = os.ReadFile(f.Hires)
	switch {
	case err == nil:
		return filepath.Base(f.Hires), f.Hires, data, nil
	case f.Set["hires"] || !errors.Is(err, os.ErrNotExist):
		return "", "", nil, fmt.Errorf("demo: --hires: %w", err)
	}
	return filepath.Base(HiresPath), "the built-in copy of " + HiresPath + " (not found here)", builtinHires, nil
}

// demoWarehouseSpec is where the demo's warehouse goes.
type demoWarehouseSpec struct {
	url string
	// schemas: the warehouse is a schema of a shared database (sink.HasSchemas), not a file.
	schemas bool
}

// demoWarehouse picks the warehouse: --warehouse when given; else, when warehouse.url
// (HRSYNC_WAREHOUSE_URL) is Postgres, that database; else the file hrsync-demo.db. A SQLite
// warehouse.url is never used: that is the real warehouse.
func demoWarehouse(cfg config.Config, f Options) (demoWarehouseSpec, error) {
	target := f.Warehouse
	if !f.Set["warehouse"] {
		target = WarehouseFile
		if sink.HasSchemas(cfg.Warehouse.URL) {
			target = cfg.Warehouse.URL
		}
	}
	switch {
	case sink.HasSchemas(target):
		return demoWarehouseSpec{url: target, schemas: true}, nil
	case target == "" || strings.Contains(target, "://") || strings.ContainsAny(target, "?#"):
		return demoWarehouseSpec{}, &UsageError{"demo: --warehouse: want a SQLite file path or a postgres:// URL"}
	}
	if _, err := sink.Classify(target); err != nil { // never repeated: it may hold a password
		return demoWarehouseSpec{}, &UsageError{fmt.Sprintf("demo: --warehouse: %v", err)}
	}
	return demoWarehouseSpec{url: target}, nil
}

func (wh demoWarehouseSpec) describe(schema string) string {
	return sink.Describe(wh.url, schema)
}

// untouched says that the configured warehouse is not the demo's.
func (wh demoWarehouseSpec) untouched(cfg config.Config, schema string) string {
	configured := cfg.Warehouse.URL
	switch {
	case wh.schemas && sink.HasSchemas(configured) && cfg.Warehouse.Schema != schema:
		return "a schema of its own: the warehouse's schema " + cfg.Warehouse.Schema + " is not touched"
	case wh.schemas:
		return "a schema of its own: no other schema is touched"
	case sink.HasSchemas(configured):
		return "a file of its own: the configured warehouse " + sink.RedactURL(configured) + " is not touched"
	case configured != "" && absPath(configured) != absPath(wh.url):
		return "a file of its own: " + configured + " is not touched"
	}
	return ""
}

func (wh demoWarehouseSpec) shellName() string {
	return "with " + sink.ShellName(wh.url)
}

// command is one of the example queries as a command to paste: the queries are one line, quote
// their literals with ' only, and hold no $, so they go between double quotes as they are.
func (wh demoWarehouseSpec) command(schema, query string) string {
	return sink.ShellCommand(wh.url, schema, query)
}

// serveEnv is the environment that points hrsync at the demo's warehouse.
func (wh demoWarehouseSpec) serveEnv(schema string) string {
	env := "HRSYNC_WAREHOUSE_URL=" + sink.ShellQuote(sink.ClientURL(wh.url))
	if wh.schemas {
		env += " HRSYNC_WAREHOUSE_SCHEMA=" + schema
	}
	return env
}

// listenReplica listens on --addr; when the default address is taken, on a free port of the
// same host instead, with a note saying so.
func listenReplica(f Options) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", f.Addr)
	if err == nil {
		return ln, "", nil
	}
	if f.Set["addr"] {
		return nil, "", fmt.Errorf("demo: replica: listen on %s: %w (choose another with --addr, or --no-serve)", f.Addr, err)
	}
	host, _, err2 := net.SplitHostPort(f.Addr)
	if err2 == nil {
		ln, err2 = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err2 != nil {
		return nil, "", fmt.Errorf("demo: replica: listen on %s: %w", f.Addr, err)
	}
	return ln, f.Addr + " is taken, so another free port; --addr chooses", nil
}

// reachable is addr as a client writes it: an unspecified host (":8080", "0.0.0.0:8080") is
// reached on the loopback address.
func reachable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// probe GETs a page of the replica with the key and returns its ETag.
func probe(ctx context.Context, target, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-API-KEY", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		return "", fmt.Errorf("GET %s: %s", target, resp.Status)
	}
	return resp.Header.Get("ETag"), nil
}

// sampleID is an employee worth looking at: the first hire created, else the first generated.
func sampleID(file onboard.FileResult, up *fakeupstream.Server) int64 {
	for _, r := range file.Rows {
		if r.Outcome == onboard.OutcomeCreated && r.EmployeeID > 0 {
			return r.EmployeeID
		}
	}
	var e struct {
		ID json.Number `json:"id"`
	}
	if es := up.Employees(); len(es) > 0 && json.Unmarshal(es[0], &e) == nil {
		if id, err := e.ID.Int64(); err == nil {
			return id
		}
	}
	return 1
}

func result(rs []walk.Result, r sink.Resource) walk.Result {
	for _, x := range rs {
		if x.Resource == r {
			return x
		}
	}
	return walk.Result{}
}

func count(f onboard.FileResult, outcome string) int {
	n := 0
	for _, r := range f.Rows {
		if r.Outcome == outcome {
			n++
		}
	}
	return n
}

// aboutDuration writes d for a person: "40 seconds", "3 minutes", "2 hours 5 minutes".
func aboutDuration(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return syncreport.Plural(int64(d.Round(time.Second)/time.Second), "second")
	case d < 90*time.Minute:
		return syncreport.Plural(int64(d.Round(time.Minute)/time.Minute), "minute")
	}
	d = d.Round(time.Minute)
	return syncreport.Plural(int64(d/time.Hour), "hour") + " " + syncreport.Plural(int64(d%time.Hour/time.Minute), "minute")
}

// self is how to run hrsync here: go run from the repository, else the binary.
func self() string {
	if _, err := os.Stat(filepath.Join("cmd", "hrsync", "main.go")); err == nil {
		return "go run ./cmd/hrsync"
	}
	return "hrsync"
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// demoWriter writes the report; the first write error is kept.
type demoWriter struct {
	w   io.Writer
	err error
	// summary writes an onboarding's summary line (Wiring.OnboardSummary).
	summary func(io.Writer, onboard.FileResult)
}

const demoIndent = "               " // under the step's text

func (d *demoWriter) line(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format+"\n", args...)
	}
}

// step writes a step's title and first line.
func (d *demoWriter) step(title, format string, args ...any) {
	d.line("%-*s%s", len(demoIndent), title, fmt.Sprintf(format, args...))
}

// more writes a line under the step's text.
func (d *demoWriter) more(format string, args ...any) {
	d.line(demoIndent+format, args...)
}

// results writes a sync's summary lines, as `hrsync sync` prints them.
func (d *demoWriter) results(rs []walk.Result) {
	for _, r := range rs {
		var b bytes.Buffer
		syncreport.PrintResult(&b, "", r, false)
		d.more("  %s", strings.TrimSpace(b.String()))
	}
}

// file writes an onboarding's summary, as `hrsync onboard` prints it, and its rows.
func (d *demoWriter) file(f onboard.FileResult) {
	var b bytes.Buffer
	d.summary(&b, f)
	d.more("  %s", strings.TrimSpace(b.String()))
	var rows bytes.Buffer
	tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', 0)
	for i, r := range f.Rows {
		if i == demoMaxRowsShown {
			fmt.Fprintf(tw, "    … %d more rows\n", len(f.Rows)-i)
			break
		}
		detail := r.Reason
		if r.Outcome == onboard.OutcomeCreated {
			detail = "employee " + strconv.FormatInt(r.EmployeeID, 10)
		}
		fmt.Fprintf(tw, "    line %d\t%s\t%s\t%s\n", r.Line, r.Outcome, r.Email, detail)
	}
	_ = tw.Flush()
	for l := range strings.Lines(rows.String()) {
		d.line(demoIndent + strings.TrimRight(l, "\n"))
	}
}

// absenceDays writes the absence query's answer as a table, under its column names (a test
// holds them to department, absences and days).
func (d *demoWriter) absenceDays(days []departmentAbsence) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  department\tabsences\tdays\n")
	for _, a := range days {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", a.Department, a.Absences, strconv.FormatFloat(a.Days, 'f', -1, 64))
	}
	_ = tw.Flush()
	for l := range strings.Lines(b.String()) {
		d.line("%s", strings.TrimRight(l, "\n"))
	}
}

// headcount writes the example query's answer as a table, under the query's column names (a
// test holds them to department and headcount).
func (d *demoWriter) headcount(counts []departmentCount) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  department\theadcount\n")
	for _, c := range counts {
		fmt.Fprintf(tw, "  %s\t%d\n", c.Department, c.Headcount)
	}
	_ = tw.Flush()
	for l := range strings.Lines(b.String()) {
		d.line("%s", strings.TrimRight(l, "\n"))
	}
}
