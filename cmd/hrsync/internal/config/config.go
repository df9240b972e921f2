package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"go.yaml.in/yaml/v3"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/events"
	"github.com/hrsync/hrsync/sync/events/webhook"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/walk"
)

// Config is everything hrsync reads from config.yaml. Every key can be overridden by an
// environment variable named HRSYNC_ + the key's path in upper case joined by _ (source.api_key
// is HRSYNC_SOURCE_API_KEY); lists are comma-separated there. The environment wins. An HRSYNC_
// variable hrsync does not read is an error, as an unknown key of the file is (unknownEnv).
type Config struct {
	Source     SourceConfig     `yaml:"source"`
	Warehouse  WarehouseConfig  `yaml:"warehouse"`
	Serve      ServeConfig      `yaml:"serve"`
	Sync       SyncConfig       `yaml:"sync"`
	Onboarding OnboardingConfig `yaml:"onboarding"`
	// Schedule is when run syncs: cron (five fields) or a descriptor (@daily, @every 5m), read
	// in ScheduleTimezone.
	Schedule         string `yaml:"schedule"`
	ScheduleTimezone string `yaml:"schedule_timezone"`
	// ScheduleSpread delays each listed account's scheduled syncs by its own amount within this
	// window (a hash of its name: Account.Offset), so that many accounts on one schedule do not
	// all start at once; 0 runs them at the schedule's times.
	ScheduleSpread time.Duration `yaml:"schedule_spread"`
	Metrics        MetricsConfig `yaml:"metrics"`
	Log            LogConfig     `yaml:"log"`
	Worker         WorkerConfig  `yaml:"worker"`
	// Retention is how long personal data is kept: off (kept for ever) unless set.
	Retention RetentionConfig `yaml:"retention"`
	// PersonalData classes what the declarations leave unclassed (PersonalDataConfig).
	PersonalData PersonalDataConfig `yaml:"personal_data"`
	// Models is what the warehouse's absence models count by (ModelsConfig).
	Models ModelsConfig `yaml:"models"`
	// Events are the joiner, mover and leaver events' settings (docs/events.md).
	Events EventsConfig `yaml:"events"`
	// AccountList are the upstream accounts one configuration syncs, each with its own source,
	// warehouse schema, schedule, lock and request budget; none: the top-level sections are the
	// one account. Read from the file only (its keys from HRSYNC_ACCOUNTS_<NAME>_… too).
	AccountList []AccountConfig `yaml:"accounts" env:"-"`
}

// SourceConfig is the upstream Employee Records service.
type SourceConfig struct {
	URL    string `yaml:"url"`
	APIKey string `yaml:"api_key"`
	// APIKeyFile is a file holding the API key (its first line that is not a # comment), for
	// keys mounted as secrets; set it or api_key, not both.
	APIKeyFile string `yaml:"api_key_file"`
	RateLimit  int    `yaml:"rate_limit"`
	// SharedBudget paces every process of the account on one budget kept in the warehouse.
	SharedBudget bool `yaml:"shared_budget"`
	// Account names that budget: the processes of one upstream account share one name.
	Account string `yaml:"account"`
	// BudgetShare divides rate_limit for a process that cannot reach the warehouse.
	BudgetShare int `yaml:"budget_share"`
}

// WarehouseConfig is where records are kept.
type WarehouseConfig struct {
	URL    string `yaml:"url"`
	Schema string `yaml:"schema"`
	// StatementTimeout bounds every statement (a Go duration: 5m, 90s): the server stops one
	// that runs longer, and hrsync gives up on a host that sends nothing for that long plus a
	// grace period.
	StatementTimeout time.Duration `yaml:"statement_timeout"`
	// MaxConnections bounds each account's pool of warehouse connections.
	MaxConnections int `yaml:"max_connections"`
	// LockTTL is how long a Postgres lock's lease lasts unrenewed: how soon another process
	// takes over the syncs of one that died (see sink.Options.LockTTL).
	LockTTL time.Duration `yaml:"lock_ttl"`
	// ErasureJournal is the erasure journal's file (sink.Options.ErasureJournal): "" is, for a
	// SQLite warehouse, the file beside it; a Postgres warehouse has none unless it is set.
	ErasureJournal string `yaml:"erasure_journal"`
}

// ServeConfig is the /v1 replica.
type ServeConfig struct {
	Addr string `yaml:"addr"`
	// MetricsAddr is where serve answers /metrics and the health checks with their reasons;
	// empty: metrics.addr. Its own, so that serve can run beside hrsync run from one
	// configuration (run --serve has one metrics port for both, metrics.addr).
	MetricsAddr string   `yaml:"metrics_addr"`
	APIKeys     []string `yaml:"api_keys"`
	APIKeyFile  string   `yaml:"api_key_file"`
	PublicURL   string   `yaml:"public_url"`
	// Writes is what POST /v1/employees does: local, forward or off; not set, it depends on
	// the account (see account.writes): forward on a replica of a source whose key this
	// process holds, off on one whose key it does not, local on a standalone warehouse.
	Writes    string `yaml:"writes"`
	AccountID int64  `yaml:"account_id"`
	// TLSCert and TLSKey are PEM files: set, the replica serves HTTPS (HTTP/1.1 and HTTP/2),
	// reloading them when they change or on SIGHUP.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// H2C accepts cleartext HTTP/2 with prior knowledge beside HTTP/1.1 (service meshes).
	H2C bool `yaml:"h2c"`
	// CORSOrigins are the origins whose scripts may read the replica (exact, or "*"); empty:
	// CORS off.
	CORSOrigins []string `yaml:"cors_origins"`
	// TrustedProxies (CIDRs or addresses) are the peers whose Forwarded / X-Forwarded-* headers
	// links are built on.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// AllowedHosts are the Host headers links may be built on; another is never echoed.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// IdempotencyTTL is how long a create's answer is kept for retries with its
	// Idempotency-Key (a Go duration).
	IdempotencyTTL time.Duration `yaml:"idempotency_ttl"`
	// CacheBytes bounds the memory of encoded answers kept until the warehouse changes (all
	// accounts); 0 keeps none.
	CacheBytes int64 `yaml:"cache_bytes"`
	// OpenAccounts bounds how many accounts' warehouses serve keeps open at once, each holding
	// sessions of its pool: one is opened at its account's first request, and the least
	// recently asked is closed to open another beyond the bound; 0: no bound.
	OpenAccounts int `yaml:"open_accounts"`
	// ETagSecret keys the MAC of ETags (at least 32 bytes): the same on every replica behind
	// one address, so that they agree on tags; empty, a random one per process. Or
	// ETagSecretFile, a file holding it. A secret: never printed or logged.
	ETagSecret     string `yaml:"etag_secret"`
	ETagSecretFile string `yaml:"etag_secret_file"`
	// Keys are keys named for logs and metrics, each reading one account's data; with several
	// accounts, the only way to give a key access. File only.
	Keys []ServeKey `yaml:"keys" env:"-"`
}

// ServeKey is one entry of serve.keys.
type ServeKey struct {
	// Name names the key in logs and metrics; never the key itself.
	Name string `yaml:"name"`
	// Key is the key clients send in X-API-KEY; or KeyFile, a file holding it; or SHA256, the
	// key's SHA-256 in hex, so the configuration need not hold the key. Exactly one of them.
	Key     string `yaml:"key"`
	KeyFile string `yaml:"key_file"`
	SHA256  string `yaml:"sha256"`
	// Account is the account whose data the key reads; may be left out when there is one.
	Account string `yaml:"account"`
	// Collections the key may read (left out: all); Fields, the field paths of their records
	// it may see (an allow list; left out: all), or Deny, those it may not (not both).
	Collections []string `yaml:"collections"`
	Fields      []string `yaml:"fields"`
	Deny        []string `yaml:"deny"`
	// DenyClasses are classes of personal data the key may not see, at any depth (health,
	// financial, identifying, free_text, employment, not_personal: see docs/personal-data.md).
	DenyClasses []string `yaml:"deny_classes"`
	// Writes lets the key create employees. Left out, it is true for a key with no scope
	// (no collections, fields, deny or deny_classes: full access) and false for a key with any.
	Writes *bool `yaml:"writes"`
}

// Scope is the key's Scope as serve takes it; a class it cannot read is left for checkScope to
// refuse.
func (k ServeKey) Scope() server.Scope {
	s := server.Scope{Collections: k.Collections, Fields: k.Fields, Deny: k.Deny, ReadOnly: !k.writes()}
	for _, name := range k.DenyClasses {
		c, _ := v1.ParseClass(name)
		s.DenyClasses = append(s.DenyClasses, c)
	}
	return s
}

// writes is whether the key may create employees: Writes when set, else only a key without a
// scope (least privilege for any key that has one).
func (k ServeKey) writes() bool {
	if k.Writes != nil {
		return *k.Writes
	}
	return k.Collections == nil && k.Fields == nil && k.Deny == nil && k.DenyClasses == nil
}

// SyncConfig shapes a sync run.
type SyncConfig struct {
	// Resources are the collections sync and run walk (default, and when empty: every one the
	// sync knows, walk.Resources, the financial ones excepted); they are loaded in the sync's order whatever order they
	// are named in.
	Resources      []string `yaml:"resources"`
	RunAtStart     bool     `yaml:"run_at_start"`
	Concurrency    int      `yaml:"concurrency"`
	MaxWalks       int      `yaml:"max_walks"`
	MaxDeleteShare float64  `yaml:"max_delete_share"`
	// Window is the part of the collections that grow without end (absences, sicknesses,
	// leave requests) a run walks between full walks.
	Window WindowConfig `yaml:"window"`
	// Guards are the load guards' settings (docs/sync.md#load-guards).
	Guards GuardsConfig `yaml:"guards"`
}

// GuardThresholds are the load guards' thresholds (sink.GuardSettings): 0 takes the default
// (for a collection of sync.guards.collections: sync.guards' own value), a negative share turns
// its guard off (fill_drop the fill guard, max_shrink the shrink guard, max_growth the growth
// guard, unlisted_rise the unlisted guard).
type GuardThresholds struct {
	MinRecords       int64   `yaml:"min_records"`
	FillFloor        float64 `yaml:"fill_floor"`
	FillDrop         float64 `yaml:"fill_drop"`
	MaxShrink        float64 `yaml:"max_shrink"`
	MaxGrowth        float64 `yaml:"max_growth"`
	GrowthMinRecords int64   `yaml:"growth_min_records"`
	UnlistedRise     float64 `yaml:"unlisted_rise"`
}

// GuardsConfig is sync.guards: the thresholds of every collection, the guards accepted for good
// (their keys: fill:employees.job_title), and a collection's own thresholds, each laid over
// sync.guards' field by field. An account's collections entry replaces the top-level one of the
// same collection; its accept list replaces the top-level one.
type GuardsConfig struct {
	// The fields of GuardThresholds, spelt out: the configuration's reflection reads no inline
	// section.
	MinRecords       int64    `yaml:"min_records"`
	FillFloor        float64  `yaml:"fill_floor"`
	FillDrop         float64  `yaml:"fill_drop"`
	MaxShrink        float64  `yaml:"max_shrink"`
	MaxGrowth        float64  `yaml:"max_growth"`
	GrowthMinRecords int64    `yaml:"growth_min_records"`
	UnlistedRise     float64  `yaml:"unlisted_rise"`
	Accept           []string `yaml:"accept"`
	// Collections are read from the file only: collection → thresholds.
	Collections map[string]GuardThresholds `yaml:"collections" env:"-"`
}

// WindowConfig is sync.window: runs walk absences, sicknesses and leave requests only from
// DaysBack days before today to DaysAhead days after it, and walk them whole when their last
// full walk is FullWalkEveryDays days old or more; 0 walks them whole every run.
type WindowConfig struct {
	DaysBack          int `yaml:"days_back"`
	DaysAhead         int `yaml:"days_ahead"`
	FullWalkEveryDays int `yaml:"full_walk_every_days"`
}

// OnboardingConfig is the CSV drop folder.
type OnboardingConfig struct {
	Dir           string `yaml:"dir"`
	PollSeconds   int    `yaml:"poll_seconds"`
	SettleSeconds int    `yaml:"settle_seconds"`
	// DateLayout is how the files write join dates (Go's notation, checked at start): empty
	// reads numeric dates day first (UK, Europe), a month-first layout ("01/02/2006") month
	// first; see onboard.HireOptions.
	DateLayout string `yaml:"date_layout"`
	// MaxFileBytes is the largest file onboarded; a larger one goes to failed/ unread.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// Group is the group, a name or a numeric gid, that may read the results in the folder
	// (processed/, failed/, reports/, the reports): files 0640 and folders 0750 of that group,
	// whatever the umask. Empty: private to the account hrsync runs as (0600, 0700). Unix only.
	Group string `yaml:"group"`
	// Mode is the results' files' mode in octal (0640; folders get x where r is: 0750), to
	// choose other than 0640 with a group, or to open them without one. Unix only.
	Mode string `yaml:"mode"`
	// ReportBOM begins each report with UTF-8's byte-order mark, so Excel shows names right
	// (default true).
	ReportBOM bool `yaml:"report_bom"`
	// Notify is the chat webhook told of each file filed in processed/ or failed/.
	Notify NotifyConfig `yaml:"notify"`
}

// NotifyConfig is onboarding.notify: a webhook (Slack's or Teams' incoming webhook, or anything
// taking a JSON {"text": "..."}) told of each file of the drop folder filed in processed/ or
// failed/: how it ended, its counts, its name and its report's place.
type NotifyConfig struct {
	// URL is the webhook's address; it carries its secret (Slack's do): never logged. Empty:
	// no notifications.
	URL string `yaml:"url"`
	// Names lets a notification name the people of the rows someone has to act on (line, name
	// and outcome, never an email); off, it names no one.
	Names bool `yaml:"names"`
}

// RetentionConfig is the retention section: how long personal data is kept, as periods
// (retention.ParsePeriod: 6y, 18m, 90d, 1y6m); empty, a rule is off and its data kept for ever.
// Every rule is off by default: hrsync cannot know an organisation's retention schedule (it
// depends on the country, the sector, the contracts and the organisation's own policy), and
// what a rule erases cannot be brought back. See docs/personal-data.md, "Retention".
type RetentionConfig struct {
	// Leavers are, per class, how long after a leaver's leaving date their data of it is kept.
	Leavers LeaversRetention `yaml:"leavers"`
	// SicknessDetails is how long after a sickness ended its health details are kept, the
	// person a leaver or not.
	SicknessDetails string `yaml:"sickness_details"`
	// OnboardingFiles is how long the onboarding folder's processed/, failed/ and reports/
	// files, and the onboarding ledger's rows, are kept.
	OnboardingFiles string `yaml:"onboarding_files"`
}

// LeaversRetention is retention.leavers: a period per erasable class.
type LeaversRetention struct {
	Identifying string `yaml:"identifying"`
	FreeText    string `yaml:"free_text"`
	Financial   string `yaml:"financial"`
	Health      string `yaml:"health"`
}

// ModelsConfig is the models section: what the warehouse's absence models count working days
// and the Bradford factor by (docs/models.md, "Working days"). hrsync writes it into the
// warehouse (sink.Store.ApplyModelSettings) before it refreshes the models, so every client of
// the views gets the same answers.
type ModelsConfig struct {
	// HolidayCalendar is the public holiday calendar of people who receive statutory holidays
	// and whose statutory holiday country names none: england-and-wales (default), scotland,
	// northern-ireland, ireland, poland, or none (no public holidays).
	HolidayCalendar string `yaml:"holiday_calendar"`
	// ClosureDays are days the company is closed (YYYY-MM-DD): a working day for nobody.
	ClosureDays []string `yaml:"closure_days"`
	// Bradford is the Bradford factor's window, bands and exclusions.
	Bradford BradfordConfig `yaml:"bradford"`
}

// EventsConfig is the events section: what the joiner, mover and leaver events a load derives
// are timed and braked by (docs/events.md).
type EventsConfig struct {
	// TimeZone is the zone whose local midnights leavings and joinings take effect at (an IANA
	// name; default Europe/London).
	TimeZone string `yaml:"time_zone"`
	// MaxLeavers and MaxLeaverShare are the mass-leaver brake: a load making more leavers than
	// the larger of the two (a count, a share of the people present) holds their events until
	// hrsync events release.
	MaxLeavers     int     `yaml:"max_leavers"`
	MaxLeaverShare float64 `yaml:"max_leaver_share"`
	// Webhooks are the subscribers the worker POSTs each event to (docs/events.md#webhooks);
	// RetryFor is how long a delivery is retried before it is dead, Timeout bounds an attempt.
	Webhooks []WebhookConfig `yaml:"webhooks" env:"-"`
	RetryFor time.Duration   `yaml:"retry_for"`
	Timeout  time.Duration   `yaml:"timeout"`
	// RetryBackoff is the wait after a delivery's first failed attempt, doubled after each
	// next one (jittered) up to an hour.
	RetryBackoff time.Duration `yaml:"retry_backoff"`
}

// WebhookConfig is one subscriber of events.webhooks: where its events go, the secret they are
// signed with (secret, or secret_file holding it), and what of them it may read, as a serve
// key's scope says it (fields or deny, deny_classes).
type WebhookConfig struct {
	Name        string   `yaml:"name"`
	URL         string   `yaml:"url"`
	Secret      string   `yaml:"secret"`
	SecretFile  string   `yaml:"secret_file"`
	Fields      []string `yaml:"fields"`
	Deny        []string `yaml:"deny"`
	DenyClasses []string `yaml:"deny_classes"`
}

// A Webhook is a subscriber of events.webhooks, checked, its secret read.
type Webhook struct {
	Name, URL, Secret string
	Scope             server.Scope
}

// webhooks checks events.webhooks: each named once, an https URL (http only to this machine),
// one valid secret, a valid scope.
func (e EventsConfig) webhooks() ([]Webhook, error) {
	var out []Webhook
	seen := map[string]bool{}
	for i, w := range e.Webhooks {
		where := fmt.Sprintf("events.webhooks %d", i+1)
		if w.Name == "" {
			return nil, fmt.Errorf("%s: give it a name", where)
		}
		where = "events.webhooks " + w.Name
		if seen[w.Name] {
			return nil, fmt.Errorf("%s: named twice", where)
		}
		seen[w.Name] = true
		u, err := url.Parse(w.URL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
			return nil, fmt.Errorf("%s: url: want an https:// address (http:// only to this machine)", where)
		}
		secret := w.Secret
		switch {
		case (w.Secret == "") == (w.SecretFile == ""):
			return nil, fmt.Errorf("%s: give secret or secret_file (one of them): a signing secret such as hrsync events secret prints", where)
		case w.SecretFile != "":
			if secret, err = readKeyFile(w.SecretFile); err != nil {
				return nil, fmt.Errorf("%s: secret_file: %w", where, err)
			}
		}
		if err := webhook.CheckSecret(secret); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		k := ServeKey{Name: w.Name, Fields: w.Fields, Deny: w.Deny, DenyClasses: w.DenyClasses}
		if err := checkScope(k); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		scope := k.Scope()
		scope.ReadOnly = true
		if err := server.CheckScope(scope); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, Webhook{Name: w.Name, URL: w.URL, Secret: secret, Scope: scope})
	}
	return out, nil
}

// isLoopback is true of localhost and the loopback addresses.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parse checks the section and gives it as the warehouse takes it.
func (e EventsConfig) parse() (sink.EventSettings, error) {
	zone, err := time.LoadLocation(e.TimeZone)
	if err != nil || e.TimeZone == "" {
		return sink.EventSettings{}, fmt.Errorf("events.time_zone %q: not a time zone (e.g. Europe/London, UTC)", e.TimeZone)
	}
	if e.MaxLeavers < 1 {
		return sink.EventSettings{}, fmt.Errorf("events.max_leavers %d: want 1 or more", e.MaxLeavers)
	}
	if !(e.MaxLeaverShare > 0 && e.MaxLeaverShare <= 1) {
		return sink.EventSettings{}, fmt.Errorf("events.max_leaver_share %v: want a share above 0 and at most 1, such as 0.05", e.MaxLeaverShare)
	}
	return sink.EventSettings{Zone: zone, MaxLeavers: e.MaxLeavers, MaxLeaverShare: e.MaxLeaverShare}, nil
}

// BradfordConfig is models.bradford.
type BradfordConfig struct {
	// WindowWeeks is the window, in weeks, ending on the day the factor is read for (52).
	WindowWeeks int `yaml:"window_weeks"`
	// Bands are the scores at which bands begin, rising (51, 201, 401, 601).
	Bands []string `yaml:"bands"`
	// ExcludeSicknessTypes are sickness types (names, any case) the factor leaves out.
	ExcludeSicknessTypes []string `yaml:"exclude_sickness_types"`
}

// parse validates the models section into the settings the sink writes; an error names the key.
func (m ModelsConfig) parse() (sink.ModelSettings, error) {
	out := sink.ModelSettings{HolidayCalendar: strings.TrimSpace(m.HolidayCalendar),
		Bradford: sink.BradfordSettings{WindowWeeks: m.Bradford.WindowWeeks, ExcludeSicknessTypes: m.Bradford.ExcludeSicknessTypes}}
	for _, d := range m.ClosureDays {
		t, err := time.Parse(time.DateOnly, strings.TrimSpace(d))
		if err != nil {
			return out, fmt.Errorf("models.closure_days %q: want a date such as 2024-12-24", d)
		}
		out.ClosureDays = append(out.ClosureDays, t)
	}
	for _, b := range m.Bradford.Bands {
		f, err := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err != nil {
			return out, fmt.Errorf("models.bradford.bands %q: want numbers, such as 51, 201, 401, 601", b)
		}
		out.Bradford.Bands = append(out.Bradford.Bands, f)
	}
	if err := out.Validate(); err != nil {
		return out, errors.New(strings.TrimPrefix(err.Error(), sink.ErrModelSettings.Error()+": "))
	}
	return out, nil
}

// MetricsConfig is the Prometheus endpoint.
type MetricsConfig struct {
	Addr string `yaml:"addr"`
}

// WorkerConfig shapes hrsync run as one of several workers sharing accounts.
type WorkerConfig struct {
	// MaxSyncs is how many accounts' syncs this worker runs at once; 0: every account's when
	// due. A sync due while the worker is full waits for a free one, and meanwhile another
	// worker with room takes the account's lock: adding a worker adds capacity.
	MaxSyncs int `yaml:"max_syncs"`
}

// LogConfig shapes the logs on stderr.
type LogConfig struct {
	Format string `yaml:"format"`
	Level  string `yaml:"level"`
}

// Settings is the configuration parsed and validated, once, by Load: Config as the file
// and the environment say it, and the typed values its strings and numbers stand for. Commands
// read these; none parses a string of the configuration again.
type Settings struct {
	Config
	// LogLevel is log.level.
	LogLevel slog.Level
	// Writes is serve.Writes as set; "" when it is not (each account's is then its default:
	// account.Writes).
	Writes server.Writes
	// PublicURL is serve.public_url; nil when it is not set.
	PublicURL *url.URL
	// TrustedProxies is serve.trusted_proxies.
	TrustedProxies []netip.Prefix
	// Accounts are the Accounts the configuration names, in its order: those of Accounts:, or
	// the one of the top-level sections. Never empty.
	Accounts []*Account
}

// DefaultOpenAccounts is serve.open_accounts' default: the warehouses of 16 accounts, each
// holding a session or two while its account is asked, leave most of a default
// max_connections = 100 to the workers, whatever the number of accounts served.
const DefaultOpenAccounts = 16

// DefaultScheduleSpread is schedule_spread's default: modest, so that a nightly or hourly
// schedule keeps its meaning (a run at most 10 minutes late), yet 1,000 accounts on one
// schedule start at under two a second rather than all in one. It delays only accounts of
// accounts: (Account.Offset).
const DefaultScheduleSpread = 10 * time.Minute

// Defaults holds the defaults config.yaml documents.
func Defaults() Config {
	return Config{
		Source: SourceConfig{RateLimit: 60, SharedBudget: true, Account: sink.DefaultBudgetAccount, BudgetShare: sink.DefaultBudgetShare},
		Sync: SyncConfig{Resources: []string{"all"}, Concurrency: walk.DefaultConcurrency, MaxWalks: walk.DefaultMaxWalks, MaxDeleteShare: sink.DefaultMaxDeleteShare,
			Window: WindowConfig{DaysBack: 90, DaysAhead: 365, FullWalkEveryDays: 7}, Guards: defaultGuards()},
		Onboarding: OnboardingConfig{PollSeconds: 30, SettleSeconds: 5, MaxFileBytes: onboard.DefaultMaxFileBytes, ReportBOM: true},
		Warehouse:  WarehouseConfig{URL: "hrsync.db", Schema: sink.DefaultSchema, StatementTimeout: sink.DefaultStatementTimeout, MaxConnections: sink.DefaultMaxOpenConns, LockTTL: sink.DefaultLockTTL},
		Serve: ServeConfig{Addr: ":8080", APIKeyFile: "hrsync.key", IdempotencyTTL: server.DefaultIdempotencyTTL,
			CacheBytes: 64 << 20, OpenAccounts: DefaultOpenAccounts},
		Log: LogConfig{Format: "text", Level: "info"},
		Models: ModelsConfig{HolidayCalendar: sink.CalendarEnglandAndWales,
			Bradford: BradfordConfig{WindowWeeks: 52, Bands: []string{"51", "201", "401", "601"}}},
		Events: EventsConfig{TimeZone: "Europe/London", MaxLeavers: sink.DefaultMaxLeavers, MaxLeaverShare: sink.DefaultMaxLeaverShare,
			RetryFor: events.DefaultRetryFor, Timeout: events.DefaultTimeout, RetryBackoff: events.DefaultRetryBackoff},

		ScheduleTimezone: "UTC",
		ScheduleSpread:   DefaultScheduleSpread,
	}
}

// Load reads the file at path (when path is "", ./config.yaml if present) over the
// defaults, then the environment over both, and parses and validates the result.
func Load(path string, environ []string) (Settings, error) {
	cfg := Defaults()
	explicit := path != ""
	if !explicit {
		path = "config.yaml"
	}
	data, err := os.ReadFile(path)
	var doc yaml.Node
	switch {
	case err == nil:
		// The file is read once, as a tree: its keys are checked against Config (unknownKeys
		// names the line and the closest valid key), then the tree is decoded. An empty file
		// is io.EOF: the defaults stand.
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
			msg := OneLine(err.Error())
			if unquotedAnyDepth.Match(data) {
				msg += ` (a field path that starts with * must be quoted: "**.email")`
			}
			return Settings{}, fmt.Errorf("config %s: %s", path, msg)
		}
		if problems := unknownKeys(&doc, reflect.TypeFor[Config](), ""); len(problems) > 0 {
			return Settings{}, fmt.Errorf("config %s: %s", path, strings.Join(problems, "; "))
		}
		if doc.Kind != 0 {
			if err := doc.Decode(&cfg); err != nil {
				return Settings{}, fmt.Errorf("config %s: %s", path, yamlErrorText(err))
			}
		}
	case explicit || !errors.Is(err, os.ErrNotExist):
		return Settings{}, fmt.Errorf("config: %w", err)
	}
	env := make(map[string]string)
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "HRSYNC_") {
			env[k] = v
		}
	}
	if err := applyEnv(reflectValue(&cfg), "HRSYNC", env); err != nil {
		return Settings{}, err
	}
	if err := decodeAccounts(&doc, &cfg, env); err != nil {
		return Settings{}, fmt.Errorf("config %s: %w", path, err)
	}
	if problems := unknownEnv(env, cfg.AccountList); len(problems) > 0 {
		return Settings{}, fmt.Errorf("config: environment: %s", strings.Join(problems, "; "))
	}
	return cfg.Parse()
}

// nonConfigEnv are the HRSYNC_ variables read elsewhere in the repository, by its tests and
// scripts, not by hrsync: a developer's shell may hold them while it runs hrsync. A test
// (TestEveryHRSYNCNameIsKnown) finds every HRSYNC_ name in the repository and holds this list to
// exactly those that are not configuration.
var nonConfigEnv = []string{
	"HRSYNC_TEST_DATABASE_URL", // sink/sinktest: the Postgres the tests use
	"HRSYNC_TEST_THROWAWAY",    // sink/sinktest: the tests make a throwaway Postgres cluster
	"HRSYNC_LINT_ONLY",         // scripts/test.sh: stop after the static checks (make lint)
	"HRSYNC_PACKAGE_BUDGET",    // scripts/test.sh: the most one package's tests may take
	"HRSYNC_BUDGET_REFERENCE",  // scripts/test.sh: the calibration's time where that budget holds
	"HRSYNC_TEST_CALIBRATION",  // internal/slowness: this machine's calibration, for the tests' hang bounds
	"HRSYNC_BIN",               // deploy/check.sh: the binary it checks
	"HRSYNC_CHECK_METRICS_URL", // deploy/check.sh: a running worker's metrics to check
}

// unknownEnv names the HRSYNC_ variables of env that hrsync does not read, each with the closest
// one it does when one is near ("unknown variable HRSYNC_SOURCE_APIKEY (did you mean
// HRSYNC_SOURCE_API_KEY?)"): as with an unknown key of the file, a variable misspelt in a unit
// file or a container's environment would otherwise drop its setting without a word. Known are
// the configuration's variables (EnvNames), those of each account of accounts (its name's
// HRSYNC_ACCOUNTS_<NAME>_ + the key's path) and nonConfigEnv. Values are never read here: a
// variable may hold a key.
func unknownEnv(env map[string]string, accounts []AccountConfig) []string {
	known := slices.Concat(EnvNames(), nonConfigEnv)
	for _, a := range accounts {
		known = append(known, accountEnvNames(a.Name)...)
	}
	fileOnly := fileOnlyEnvNames()
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(env)) {
		if slices.Contains(known, name) {
			continue
		}
		if key, ok := fileOnly[name]; ok {
			problems = append(problems, fmt.Sprintf("%s: %s is read from the config file only", name, key))
			continue
		}
		msg := "unknown variable " + name
		if near := Closest(name, known); near != "" {
			msg += " (did you mean " + near + "?)"
		} else if strings.HasPrefix(name, accountsEnvPrefix) && len(accounts) == 0 {
			msg += " (an account's variables need the account listed under accounts in the config file)"
		}
		problems = append(problems, msg)
	}
	return problems
}

// Closest is the variable of known closest to name (closest, on the part after HRSYNC_).
func Closest(name string, known []string) string {
	rest := make([]string, len(known))
	for i, k := range known {
		rest[i] = strings.TrimPrefix(k, "HRSYNC_")
	}
	if near := closest(strings.TrimPrefix(name, "HRSYNC_"), rest); near != "" {
		return "HRSYNC_" + near
	}
	return ""
}

// accountEnvNames are the variables of the account named name: HRSYNC_ACCOUNTS_<NAME>_ + the
// path of each key of AccountConfig (its name excepted: env:"-").
func accountEnvNames(name string) []string {
	return envNamesOf(reflect.TypeFor[AccountConfig](), accountsEnvPrefix+envName(name))
}

// fileOnlyEnvNames are the variables the keys read from the file only would have (env:"-":
// accounts, serve.keys), each with its key, for a message that says so.
func fileOnlyEnvNames() map[string]string {
	out := map[string]string{}
	var walk func(t reflect.Type, prefix, path string)
	walk = func(t reflect.Type, prefix, path string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			name, key := prefix+"_"+strings.ToUpper(tag), strings.TrimPrefix(path+"."+tag, ".")
			switch {
			case f.Tag.Get("env") == "-":
				out[name] = key
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, name, key)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "HRSYNC", "")
	return out
}

// yamlErrorText is a decoding error of the file as its reader can act on it: what each wrong
// value should have been, on one line, without Go's type names.
func yamlErrorText(err error) string {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	return OneLine(goTypeNames.ReplaceAllString(plainTypeErrors(msg), ""))
}

// reflectValue is the struct p points to, for applyEnv.
func reflectValue[T any](p *T) reflect.Value { return reflect.ValueOf(p).Elem() }

// yamlTypeError is yaml's "cannot unmarshal !!str `lots` into int": the reader of a config file
// knows keys and values, not Go types, so plainTypeErrors says what the value should have been.
var yamlTypeError = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: (`[^`]*`))? into (?:type )?(\\S+)")

func plainTypeErrors(msg string) string {
	return yamlTypeError.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlTypeError.FindStringSubmatch(m)
		want := "another kind of value"
		got := sub[2]
		switch {
		case got != "":
		case sub[1] == "seq":
			got = "a list"
		case sub[1] == "map":
			got = "a section of keys"
		default:
			got = "a " + sub[1]
		}
		switch t := sub[3]; {
		case strings.HasPrefix(t, "config.") || strings.HasPrefix(t, "map["):
			want = "a section of keys"
		case strings.HasPrefix(t, "[]"):
			want = "a list"
		case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
			want = "a whole number"
		case strings.HasPrefix(t, "float"):
			want = "a number"
		case t == "bool":
			want = "true or false"
		case t == "string":
			want = "text"
		case t == "time.Duration":
			want = "a duration such as 30s or 5m"
		}
		return got + " is not " + want
	})
}

// goTypeNames is any other " in type main.SourceConfig" yaml's errors add.
var goTypeNames = regexp.MustCompile(` (in|into) (type )?[A-Za-z0-9_]+\.[A-Za-z0-9_.\[\]*]+`)

// unknownKeys names, with their lines, the keys of the document that t has no field for, each
// with the closest valid key when one is near ("line 2: unknown key source.apikey (did you mean
// source.api_key?)").
func unknownKeys(n *yaml.Node, t reflect.Type, path string) []string {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return unknownKeys(n.Content[0], t, path)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice {
		var problems []string
		for i, item := range n.Content {
			problems = append(problems, unknownKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return problems
	}
	if n.Kind == yaml.MappingNode && t.Kind() == reflect.Map {
		// A section of names (sync.guards.collections): each value's keys are t's element's.
		var problems []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			problems = append(problems, unknownKeys(n.Content[i+1], t.Elem(), path+"."+n.Content[i].Value)...)
		}
		return problems
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil // a scalar where a section belongs is the decoder's to report
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
	}
	var problems []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		full := k.Value
		if path != "" {
			full = path + "." + k.Value
		}
		ft, ok := fields[k.Value]
		if !ok {
			msg := fmt.Sprintf("line %d: unknown key %s", k.Line, full)
			if near := closest(k.Value, names); near != "" {
				if path != "" {
					near = path + "." + near
				}
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			problems = append(problems, msg)
			continue
		}
		problems = append(problems, unknownKeys(v, ft, full)...)
	}
	return problems
}

// closest is the name nearest to s by edit distance (Levenshtein, in runes), ignoring case, _
// and -; "" when none is near enough to be a likely typo.
func closest(s string, names []string) string {
	norm := func(x string) string { return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(x)) }
	best, bestD := "", 0
	for _, name := range names {
		d := levenshtein.ComputeDistance(norm(s), norm(name))
		if best == "" || d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" || bestD > max(1, utf8.RuneCountInString(norm(s))/3) {
		return ""
	}
	return best
}

// applyEnv sets every field whose variable is present in env.
func applyEnv(v reflect.Value, prefix string, env map[string]string) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("env") == "-" {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		name := prefix + "_" + strings.ToUpper(tag)
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct {
			if err := applyEnv(fv, name, env); err != nil {
				return err
			}
			continue
		}
		s, ok := env[name]
		if !ok {
			continue
		}
		if f.Type == reflect.TypeFor[MemberClasses]() {
			m, err := parseMemberClasses(s)
			if err != nil {
				return fmt.Errorf("config: %s: %w", name, err)
			}
			fv.Set(reflect.ValueOf(m))
			continue
		}
		if f.Type == reflect.TypeFor[time.Duration]() {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("config: %s: want a duration such as 90s or 5m", name)
			}
			fv.SetInt(int64(d))
			continue
		}
		switch f.Type.Kind() {
		case reflect.String:
			fv.SetString(s)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return fmt.Errorf("config: %s: want an integer", name)
			}
			fv.SetInt(n)
		case reflect.Float64:
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return fmt.Errorf("config: %s: want a number", name)
			}
			fv.SetFloat(f)
		case reflect.Bool:
			b, err := strconv.ParseBool(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("config: %s: want true or false", name)
			}
			fv.SetBool(b)
		case reflect.Slice:
			var items []string
			for item := range strings.SplitSeq(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
			fv.Set(reflect.ValueOf(items))
		default:
			return fmt.Errorf("config: %s: unsupported type %s", name, f.Type)
		}
	}
	return nil
}

// EnvNames lists every variable the configuration reads, for docs and tests.
func EnvNames() []string { return envNamesOf(reflect.TypeFor[Config](), "HRSYNC") }

// envNamesOf lists the variables applyEnv reads into a t under prefix.
func envNamesOf(t reflect.Type, prefix string) []string {
	var names []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("env") == "-" {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			name := prefix + "_" + strings.ToUpper(tag)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, name)
				continue
			}
			names = append(names, name)
		}
	}
	walk(t, prefix)
	return names
}

// Parse validates c and parses its values, once, into the settings the commands run on.
func (c Config) Parse() (Settings, error) {
	s := Settings{Config: c}
	var err error
	if s.Accounts, err = c.parseAccounts(); err != nil {
		return Settings{}, err
	}
	if s.Writes, err = server.ParseWrites(c.Serve.Writes); err != nil {
		return Settings{}, fmt.Errorf("config: serve.writes: %w", err)
	}
	for _, a := range s.Accounts {
		a.ResolveWrites(s.Writes)
	}
	if c.Serve.PublicURL != "" {
		if s.PublicURL, err = HTTPURL(c.Serve.PublicURL); err != nil {
			return Settings{}, errors.New("config: serve.public_url must be an absolute http(s) address")
		}
	}
	for _, p := range c.Serve.TrustedProxies {
		pfx, err := parsePrefix(p)
		if err != nil {
			return Settings{}, fmt.Errorf("config: serve.trusted_proxies: %w", err)
		}
		s.TrustedProxies = append(s.TrustedProxies, pfx)
	}
	for _, h := range c.Serve.AllowedHosts {
		if !server.ValidHost(h) {
			return Settings{}, fmt.Errorf("config: serve.allowed_hosts: %q is not a host name or address with an optional :port", h)
		}
	}
	for _, o := range c.Serve.CORSOrigins {
		if o == "*" {
			continue
		}
		if _, err := server.NormalizeOrigin(o); err != nil {
			return Settings{}, fmt.Errorf("config: serve.cors_origins: %w", err)
		}
	}
	if c.Serve.IdempotencyTTL < time.Minute {
		return Settings{}, fmt.Errorf("config: serve.idempotency_ttl %v: want at least 1m (a Go duration: 24h, 90m)", c.Serve.IdempotencyTTL)
	}
	if (c.Serve.TLSCert == "") != (c.Serve.TLSKey == "") {
		return Settings{}, errTLSHalf
	}
	if c.Serve.H2C && c.Serve.TLSCert != "" {
		return Settings{}, errors.New("config: serve.h2c is cleartext HTTP/2; with serve.tls_cert, HTTP/2 is offered over TLS already: unset one of them")
	}
	if c.Serve.AccountID < 0 {
		return Settings{}, errors.New("config: serve.account_id must not be negative")
	}
	if c.Serve.OpenAccounts < 0 {
		return Settings{}, errors.New("config: serve.open_accounts must be 0 (no bound) or more")
	}
	if c.Serve.CacheBytes < 0 {
		return Settings{}, errors.New("config: serve.cache_bytes must be 0 (no cache) or more")
	}
	if err := s.readETagSecret(); err != nil {
		return Settings{}, err
	}
	if c.Worker.MaxSyncs < 0 {
		return Settings{}, errors.New("config: worker.max_syncs must be 0 (no bound) or more")
	}
	if err := s.checkServeKeys(); err != nil {
		return Settings{}, err
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return Settings{}, fmt.Errorf("config: log.format %q: want text or json", c.Log.Format)
	}
	if err := s.LogLevel.UnmarshalText([]byte(c.Log.Level)); err != nil {
		return Settings{}, fmt.Errorf("config: log.level %q: want debug, info, warn or error", c.Log.Level)
	}
	return s, nil
}

// ResourceNames are the names of rs.
func ResourceNames(rs []sink.Resource) []string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = string(r)
	}
	return names
}

// ParseResources reads names of collections (sync.resources, sync --resource) into the
// collections, in the order a sync loads them, each once. all is every collection the sync knows
// except the sensitive ones (the financial module), which are walked only when named:
// "all,salaries" adds one. A name the sync does not know is an error naming the closest known
// one and all of them; so is no name at all.
func ParseResources(names []string) ([]sink.Resource, error) {
	known := ResourceNames(walk.Known)
	var rs []sink.Resource
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			rs = append(rs, walk.Resources...)
			continue
		}
		if !slices.Contains(known, name) {
			msg := fmt.Sprintf("unknown collection %q", name)
			if near := closest(name, known); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return nil, fmt.Errorf("%s; known: %s", msg, strings.Join(known, ", "))
		}
		rs = append(rs, sink.Resource(name))
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("no collection named; want one or more of %s", strings.Join(known, ", "))
	}
	return walk.Ordered(rs), nil
}

// HTTPURL parses an absolute http or https address.
func HTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not an absolute http(s) address")
	}
	return u, nil
}

// Logger is the process's logger, writing to w in log.format at log.level, every configured
// secret redacted from every line (RedactingHandler).
func (s Settings) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.LogLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if s.Log.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(RedactingHandler(h, s.Secrets()))
}

// unquotedAnyDepth finds a list item that starts with an unquoted * (fields: [**.email]), which
// YAML reads as an alias: the file does not parse.
var unquotedAnyDepth = regexp.MustCompile(`(?m)(^\s*-|[\[,])\s*\*`)

// OneLine folds a message onto one line, for the operator: its lines joined by "; ", its runs
// of white space one space, and any other control character (a terminal's escape, from a file's
// name) a '?'. Every message hrsync prints or logs for a person goes through it.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " "))
}

// parsePrefix reads a trusted proxy: a CIDR (10.0.0.0/8) or one address (10.1.2.3, ::1).
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR (e.g. 10.0.0.0/8)", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither an address nor a CIDR (e.g. 10.0.0.0/8)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// readETagSecret takes serve.etag_secret, or reads serve.etag_secret_file into it, and refuses
// one shorter than serve.MinETagSecretBytes; its errors never hold the secret.
func (s *Settings) readETagSecret() error {
	sc := &s.Serve
	if sc.ETagSecretFile != "" {
		if sc.ETagSecret != "" {
			return errors.New("config: serve.etag_secret and serve.etag_secret_file are both set: keep one")
		}
		secret, err := readKeyFile(sc.ETagSecretFile)
		if err != nil {
			return fmt.Errorf("config: serve.etag_secret_file: %w", err)
		}
		sc.ETagSecret = secret
	}
	if sc.ETagSecret != "" && len(sc.ETagSecret) < server.MinETagSecretBytes {
		return fmt.Errorf("config: serve.etag_secret is %d bytes: want at least %d (openssl rand -hex 32 makes one)", len(sc.ETagSecret), server.MinETagSecretBytes)
	}
	return nil
}
