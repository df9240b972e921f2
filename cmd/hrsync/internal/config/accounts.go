package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/retention"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

// AccountConfig is one entry of accounts: an upstream account with its own source, warehouse
// schema, schedule and onboarding folder, synced by the same worker as the others. Its sections
// take the keys of the top-level sections of the same names, and what it leaves out it takes
// from them (their file values, then their HRSYNC_ variables), except what can belong to one
// account only: source.url, source.api_key and source.api_key_file, and onboarding.dir are its
// own or unset; warehouse.schema is its name unless it names one; the budget is named by the
// account's name. Its own variables are HRSYNC_ACCOUNTS_<NAME>_ + the key's path
// (HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY), and win over its file keys.
type AccountConfig struct {
	// Name is the account's name, from the file only: its variables are named after it.
	Name             string           `yaml:"name" env:"-"`
	Source           SourceConfig     `yaml:"source"`
	Warehouse        WarehouseConfig  `yaml:"warehouse"`
	Sync             SyncConfig       `yaml:"sync"`
	Onboarding       OnboardingConfig `yaml:"onboarding"`
	Schedule         string           `yaml:"schedule"`
	ScheduleTimezone string           `yaml:"schedule_timezone"`
	ScheduleSpread   time.Duration    `yaml:"schedule_spread"`
	Retention        RetentionConfig  `yaml:"retention"`
	// PersonalData takes the top-level section's members, its own laid over them member by
	// member: custom fields differ between HR accounts.
	PersonalData PersonalDataConfig `yaml:"personal_data"`
	// Models takes the top-level section, its own keys laid over it.
	Models ModelsConfig `yaml:"models"`
	// Events takes the top-level section, its own keys laid over it.
	Events EventsConfig `yaml:"events"`
}

// Account is one account as the commands run it: its settings parsed and validated once.
type Account struct {
	// Name is the account's Name: its metrics' account label, its budget's Name, its ledger's
	// account; source.account for the single account of a configuration without accounts.
	Name string
	// Listed is true for an account of accounts:, false for the top-level one.
	Listed     bool
	Source     SourceConfig
	Warehouse  WarehouseConfig
	Sync       SyncConfig
	Onboarding OnboardingConfig
	Schedule   string
	// AccountID is serve.account_id, for the top-level account (0 for the listed ones: locally
	// created employees take the account of the records already there).
	AccountID int64
	// Location is schedule_timezone.
	Location *time.Location
	// Spread is schedule_spread: the window the account's place (runner.Offset of its name)
	// is in.
	Spread time.Duration
	// PollInterval and Settle are onboarding.poll_seconds and onboarding.settle_seconds.
	PollInterval, Settle time.Duration
	// ResultAccess is onboarding.group and onboarding.mode, checked: who may read the results
	// of the drop folder (private by default).
	ResultAccess onboard.Access
	// Resources is sync.Resources, in the order a sync loads them.
	Resources []sink.Resource
	// Window is sync.Window; nil when full_walk_every_days is 0 (every run walks everything).
	Window *walk.WindowPolicy
	// Guards, CollectionGuards and AcceptForGood are sync.guards, parsed: the load guards'
	// settings, each collection's own of sync.guards.collections (its non-zero fields over
	// Guards': sink.GuardSettings.Over), and the guards accepted for good (WalkOptions).
	Guards           sink.GuardSettings
	CollectionGuards map[sink.Resource]sink.GuardSettings
	AcceptForGood    []string
	// Retention are retention's rules, parsed (their onboarding folder the account's); none set:
	// retention is off.
	Retention retention.Rules
	// Writes is what the account's replica does with a create (ResolveWrites); WritesSet is
	// whether serve.Writes chose it.
	Writes    server.Writes
	WritesSet bool
	// Declarations are the declarations with personal_data.members classed beside them: what
	// the account's erasures, retention, replica and inventory act on classes by.
	Declarations v1.Declarations
	// PersonalData is the personal_data section, as read (its lists trimmed of nothing: they
	// are the data protection officer's sentences).
	PersonalData PersonalDataConfig
	// Models are the models section, parsed: what sync and report write into the warehouse
	// (sink.Store.ApplyModelSettings) before they refresh its models.
	Models sink.ModelSettings
	// Events are the events section, parsed (sink.Options.Events); Webhooks its subscribers,
	// RetryFor and Timeout their deliveries' (sync/events.DeliverOptions).
	Events                          sink.EventSettings
	Webhooks                        []Webhook
	RetryFor, Timeout, RetryBackoff time.Duration
}

// ResolveWrites sets the account's write mode: serve.writes when it is set (set, "" when not),
// otherwise the safe default for the account:
//   - no source.url, a standalone warehouse: local, the warehouse is the system of record;
//   - a replica of a source whose API key this process holds: forward, so an employee created
//     through the replica is created in the HR system, as a client of /v1 expects;
//   - a replica whose key it does not hold (source.url alone, the key kept for the sync's
//     process): off, a create is refused (405) rather than kept where the HR system never
//     sees it; set source.api_key to forward.
//
// Local writes on a replica are taken only when serve.writes says so (warnWrites says at start
// that such creates never reach the HR system).
func (a *Account) ResolveWrites(set server.Writes) {
	a.Writes, a.WritesSet = set, set != ""
	switch {
	case a.WritesSet:
	case a.Source.URL == "":
		a.Writes = server.WritesLocal
	case a.Source.APIKey == "":
		a.Writes = server.WritesOff
	default:
		a.Writes = server.WritesForward
	}
}

// Replica reports whether the account's warehouse is a Replica of a source.
func (a *Account) Replica() bool { return a.Source.URL != "" }

// MaxScheduleSpread bounds schedule_spread: a day, a nightly schedule's period.
const MaxScheduleSpread = 24 * time.Hour

// Offset is how long after each time of its schedule the account's sync runs: its place in
// schedule_spread, for an account of accounts:. The one account of a configuration without
// accounts: runs at its schedule's times: it has no other account to keep clear of.
func (a *Account) Offset() time.Duration {
	if !a.Listed {
		return 0
	}
	return runner.Offset(a.Name, a.Spread)
}

// accountName is what an account may be called: it becomes a metrics label, a schema, part of a
// file name and of variable names.
var accountName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// accountsEnvPrefix starts an account's own variables: HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY.
const accountsEnvPrefix = "HRSYNC_ACCOUNTS_"

// envName is the part of an account's variables that names it: upper case, - as _.
func envName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// accountBase is what an account of accounts: starts from before its own keys: the top-level
// sections, without what belongs to one account only.
func (c Config) accountBase() AccountConfig {
	a := AccountConfig{Source: c.Source, Warehouse: c.Warehouse, Sync: c.Sync, Onboarding: c.Onboarding,
		Schedule: c.Schedule, ScheduleTimezone: c.ScheduleTimezone, ScheduleSpread: c.ScheduleSpread, Retention: c.Retention,
		PersonalData: c.PersonalData.clone(), Models: c.Models, Events: c.Events}
	a.Sync.Guards = c.Sync.Guards.clone() // an account's collections are laid over a copy
	a.Source.URL, a.Source.APIKey, a.Source.APIKeyFile = "", "", ""
	a.Warehouse.Schema = ""
	a.Onboarding.Dir = ""
	return a
}

// decodeAccounts decodes the accounts of the document's accounts: list, each over the top-level
// sections (c, already read from the file and the environment), then its own variables over it.
func decodeAccounts(doc *yaml.Node, c *Config, env map[string]string) error {
	list := accountsNode(doc)
	c.AccountList = nil
	if list == nil {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: accounts is a list of accounts, each with a name", list.Line)
	}
	for i, n := range list.Content {
		a := c.accountBase()
		if err := n.Decode(&a); err != nil {
			return fmt.Errorf("accounts[%d]: %s", i, yamlErrorText(err))
		}
		if accountName.MatchString(a.Name) {
			if err := applyEnv(reflectValue(&a), accountsEnvPrefix+envName(a.Name), env); err != nil {
				return err
			}
		}
		c.AccountList = append(c.AccountList, a)
	}
	return nil
}

// accountsNode is the value of the document's top-level accounts key; nil when it has none.
func accountsNode(doc *yaml.Node) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "accounts" {
			return m.Content[i+1]
		}
	}
	return nil
}

// parseAccounts validates the accounts the configuration names: those of accounts:, or, when it
// lists none, the one its top-level sections describe.
func (c Config) parseAccounts() ([]*Account, error) {
	if len(c.AccountList) == 0 {
		a := AccountConfig{Name: c.Source.Account, Source: c.Source, Warehouse: c.Warehouse, Sync: c.Sync,
			Onboarding: c.Onboarding, Schedule: c.Schedule, ScheduleTimezone: c.ScheduleTimezone, ScheduleSpread: c.ScheduleSpread,
			Retention: c.Retention, PersonalData: c.PersonalData, Models: c.Models, Events: c.Events}
		acct, err := a.parse("")
		if err != nil {
			return nil, err
		}
		acct.AccountID = c.Serve.AccountID
		return []*Account{acct}, nil
	}
	switch {
	case c.Source.URL != "" || c.Source.APIKey != "" || c.Source.APIKeyFile != "":
		return nil, errors.New("config: source.url, source.api_key and source.api_key_file belong in each account when accounts is set")
	case c.Onboarding.Dir != "":
		return nil, errors.New("config: onboarding.dir belongs in each account when accounts is set")
	}
	var out []*Account
	seen := map[string]string{} // warehouse (URL and schema), onboarding folder → the account using it
	for i, a := range c.AccountList {
		if !accountName.MatchString(a.Name) {
			return nil, fmt.Errorf("config: accounts[%d]: name %q: want lower-case letters, digits, - and _, starting with a letter (at most 40)", i, a.Name)
		}
		a.Source.Account = a.Name
		if a.Warehouse.Schema == "" {
			a.Warehouse.Schema = strings.ReplaceAll(a.Name, "-", "_")
		}
		acct, err := a.parse("account " + a.Name + ": ")
		if err != nil {
			return nil, err
		}
		acct.Listed = true
		if acct.Warehouse.URL, err = accountWarehouseURL(a.Warehouse.URL, c.Warehouse.URL, acct.Warehouse.Schema); err != nil {
			return nil, fmt.Errorf("config: account %s: warehouse.url: %w", a.Name, err)
		}
		claims := []struct{ what, key string }{
			{"name", "name " + a.Name},
			{"warehouse", "warehouse " + acct.Warehouse.URL + " schema " + acct.Warehouse.Schema},
		}
		if dir := acct.Onboarding.Dir; dir != "" {
			claims = append(claims, struct{ what, key string }{"onboarding.dir", "folder " + filepath.Clean(dir)})
		}
		for _, cl := range claims {
			if other, ok := seen[cl.key]; ok {
				return nil, fmt.Errorf("config: accounts %s and %s have the same %s: each account needs its own", other, a.Name, cl.what)
			}
			seen[cl.key] = a.Name
		}
		out = append(out, acct)
	}
	return out, nil
}

// parse validates one account's sections; what is a message's prefix ("account acme: ").
func (a AccountConfig) parse(what string) (*Account, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("config: "+what+format, args...)
	}
	acct := &Account{Name: a.Name, Source: a.Source, Warehouse: a.Warehouse, Sync: a.Sync, Onboarding: a.Onboarding, Schedule: a.Schedule}
	src := a.Source
	if src.RateLimit < 0 {
		return nil, fail("source.rate_limit must be 0 (unpaced) or more requests a minute")
	}
	if src.BudgetShare < 1 {
		return nil, fail("source.budget_share must be at least 1")
	}
	if strings.TrimSpace(src.Account) == "" {
		return nil, fail("source.account must name the account's budget (default: default)")
	}
	if src.URL != "" {
		if _, err := HTTPURL(src.URL); err != nil {
			return nil, fail("source.url must be an absolute http(s) address")
		}
	}
	if src.APIKeyFile != "" {
		if src.APIKey != "" {
			return nil, fail("source.api_key and source.api_key_file are both set: keep one")
		}
		key, err := readKeyFile(src.APIKeyFile)
		if err != nil {
			return nil, fail("source.api_key_file: %v", err)
		}
		acct.Source.APIKey = key
	}
	if a.Schedule != "" {
		if err := runner.ParseSchedule(a.Schedule); err != nil {
			return nil, fail("%s", OneLine(err.Error()))
		}
	}
	loc, err := time.LoadLocation(a.ScheduleTimezone)
	if err != nil {
		return nil, fail("schedule_timezone %q: not a time zone (e.g. UTC, Europe/London)", a.ScheduleTimezone)
	}
	acct.Location = loc
	if a.ScheduleSpread < 0 || a.ScheduleSpread > MaxScheduleSpread {
		return nil, fail("schedule_spread %s: want a duration from 0 to %s, such as 30m", a.ScheduleSpread, MaxScheduleSpread)
	}
	acct.Spread = a.ScheduleSpread
	if a.Onboarding.PollSeconds < 1 || a.Onboarding.SettleSeconds < 0 {
		return nil, fail("onboarding.poll_seconds must be at least 1 and onboarding.settle_seconds not negative")
	}
	if a.Onboarding.MaxFileBytes < 1 {
		return nil, fail("onboarding.max_file_bytes must be at least 1")
	}
	if err := onboard.CheckDateLayout(a.Onboarding.DateLayout); err != nil {
		return nil, fail("onboarding.date_layout %q is not the layout of a whole date in Go's notation (year 2006, month 01, day 02: 01/02/2006 for US month-first files); empty reads dates day first", a.Onboarding.DateLayout)
	}
	if acct.ResultAccess, err = resultAccess(a.Onboarding); err != nil {
		return nil, fail("%v", err)
	}
	if u := a.Onboarding.Notify.URL; u != "" {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			// Never the address itself: it holds the webhook's secret.
			return nil, fail("onboarding.notify.url must be an absolute http(s) address, such as a Slack or Teams incoming webhook's")
		}
	}
	acct.PollInterval = time.Duration(a.Onboarding.PollSeconds) * time.Second
	acct.Settle = time.Duration(a.Onboarding.SettleSeconds) * time.Second
	if a.Sync.Concurrency < 1 || a.Sync.Concurrency > 64 {
		return nil, fail("sync.concurrency must be between 1 and 64")
	}
	if a.Sync.MaxWalks < 1 {
		return nil, fail("sync.max_walks must be at least 1")
	}
	acct.Resources = walk.Resources // empty (HRSYNC_SYNC_RESOURCES= included): the default
	if len(a.Sync.Resources) > 0 {
		if acct.Resources, err = ParseResources(a.Sync.Resources); err != nil {
			return nil, fail("sync.resources: %w", err)
		}
	}
	if w := a.Sync.Window; w.DaysBack < 0 || w.DaysAhead < 0 || w.FullWalkEveryDays < 0 {
		return nil, fail("sync.window.days_back, days_ahead and full_walk_every_days must not be negative")
	}
	if w := a.Sync.Window; w.FullWalkEveryDays > 0 {
		acct.Window = &walk.WindowPolicy{DaysBack: w.DaysBack, DaysAhead: w.DaysAhead,
			FullEvery: time.Duration(w.FullWalkEveryDays) * 24 * time.Hour}
	}
	if a.Sync.MaxDeleteShare <= 0 || a.Sync.MaxDeleteShare > 1 {
		return nil, fail("sync.max_delete_share must be more than 0 and at most 1")
	}
	if err := acct.parseGuards(a.Sync.Guards); err != nil {
		return nil, fail("%v", err)
	}
	if a.Warehouse.StatementTimeout < time.Second {
		return nil, fail("warehouse.statement_timeout must be a duration of at least 1s, such as 5m")
	}
	if a.Warehouse.LockTTL < 3*time.Second || a.Warehouse.LockTTL > time.Hour {
		return nil, fail("warehouse.lock_ttl must be a duration from 3s to 1h, such as 30s")
	}
	if a.Warehouse.URL == "" {
		return nil, fail("warehouse.url is empty (a postgres:// URL or a SQLite file path)")
	}
	if _, err := sink.Classify(a.Warehouse.URL); err != nil { // says what it is without repeating it
		return nil, fail("warehouse.url: %v", err)
	}
	if a.Warehouse.MaxConnections < 1 {
		return nil, fail("warehouse.max_connections must be at least 1")
	}
	if acct.Retention, err = a.Retention.parse(a.Onboarding.Dir); err != nil {
		return nil, fail("%v", err)
	}
	if acct.Declarations, err = a.PersonalData.parse(); err != nil {
		return nil, fail("%v", err)
	}
	acct.PersonalData = a.PersonalData
	if acct.Models, err = a.Models.parse(); err != nil {
		return nil, fail("%v", err)
	}
	if acct.Events, err = a.Events.parse(); err != nil {
		return nil, fail("%v", err)
	}
	if acct.Webhooks, err = a.Events.webhooks(); err != nil {
		return nil, fail("%v", err)
	}
	switch e := a.Events; {
	case e.RetryFor < time.Minute:
		return nil, fail("events.retry_for %s: want a minute or more, such as 72h", e.RetryFor)
	case e.Timeout < time.Second || e.Timeout > 5*time.Minute:
		return nil, fail("events.timeout %s: want 1s to 5m", e.Timeout)
	case e.RetryBackoff < 100*time.Millisecond || e.RetryBackoff > time.Hour:
		return nil, fail("events.retry_backoff %s: want 100ms to 1h", e.RetryBackoff)
	}
	acct.RetryFor, acct.Timeout, acct.RetryBackoff = a.Events.RetryFor, a.Events.Timeout, a.Events.RetryBackoff
	return acct, nil
}

// parse reads the retention section's periods into the rules, dir the onboarding folder; an
// error names the key.
func (r RetentionConfig) parse(dir string) (retention.Rules, error) {
	rules := retention.Rules{Leavers: map[v1.Class]retention.Period{}, OnboardingDir: dir}
	for _, k := range []struct {
		key  string
		val  string
		into *retention.Period
	}{
		{"retention.leavers.identifying", r.Leavers.Identifying, nil},
		{"retention.leavers.free_text", r.Leavers.FreeText, nil},
		{"retention.leavers.financial", r.Leavers.Financial, nil},
		{"retention.leavers.health", r.Leavers.Health, nil},
		{"retention.sickness_details", r.SicknessDetails, &rules.SicknessDetails},
		{"retention.onboarding_files", r.OnboardingFiles, &rules.OnboardingFiles},
	} {
		p, err := retention.ParsePeriod(k.val)
		if err != nil {
			return retention.Rules{}, fmt.Errorf("%s: %w", k.key, err)
		}
		if k.into != nil {
			*k.into = p
			continue
		}
		c, _ := v1.ParseClass(strings.TrimPrefix(k.key, "retention.leavers."))
		if !p.IsZero() {
			rules.Leavers[c] = p
		}
	}
	return rules, nil
}

// readKeyFile reads an API key from a file: its first line that is neither empty nor a #
// comment.
func readKeyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line, nil
		}
	}
	return "", fmt.Errorf("%s holds no key", path)
}

// accountWarehouseURL is where a listed account's tables are: its own warehouse.url when it sets
// one; otherwise the shared warehouse, where on Postgres the account's schema separates it, and
// for SQLite, which has no schemas, a file of its own beside the shared one: hrsync.db gives
// hrsync-acme.db for the schema acme.
func accountWarehouseURL(own, shared, schema string) (string, error) {
	if own != shared || sink.HasSchemas(shared) {
		return own, nil
	}
	path, err := sink.SQLitePath(shared)
	if err != nil {
		return "", err
	}
	ext := filepath.Ext(path)
	file := strings.TrimSuffix(path, ext) + "-" + schema + ext
	i := strings.Index(shared, path)
	return shared[:i] + file + shared[i+len(path):], nil
}

// Names are the accounts' names.
func Names(accts []*Account) []string {
	names := make([]string, len(accts))
	for i, a := range accts {
		names[i] = a.Name
	}
	return names
}

// UnknownAccountError is a command's --account naming no account of the configuration: a usage
// error (exit status 2).
type UnknownAccountError struct{ msg string }

func (e *UnknownAccountError) Error() string { return e.msg }

// Pick returns the accounts a command's --account names (comma-separated), in the
// configuration's order; every account when it names none.
func (s Settings) Pick(flag string) ([]*Account, error) {
	if strings.TrimSpace(flag) == "" {
		return s.Accounts, nil
	}
	var out []*Account
	for name := range strings.SplitSeq(flag, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(s.Accounts, func(a *Account) bool { return a.Name == name })
		if i < 0 {
			msg := fmt.Sprintf("--account %q: no such account", name)
			if near := closest(name, Names(s.Accounts)); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return nil, &UnknownAccountError{msg + "; configured: " + strings.Join(Names(s.Accounts), ", ")}
		}
		if !slices.Contains(out, s.Accounts[i]) {
			out = append(out, s.Accounts[i])
		}
	}
	if len(out) == 0 {
		return s.Accounts, nil
	}
	slices.SortFunc(out, func(a, b *Account) int {
		return slices.Index(s.Accounts, a) - slices.Index(s.Accounts, b)
	})
	return out, nil
}

// SinkOptions are the account's warehouse options.
func (a *Account) SinkOptions() sink.Options {
	return sink.Options{Schema: a.Warehouse.Schema, Account: a.Name, AccountID: a.AccountID,
		StatementTimeout: a.Warehouse.StatementTimeout, MaxOpenConns: a.Warehouse.MaxConnections,
		LockTTL: a.Warehouse.LockTTL, Declarations: a.Declarations, ErasureJournal: a.Warehouse.ErasureJournal,
		Events: a.Events}
}

// Wrap names the account in err when it is one of accounts:.
func (a *Account) Wrap(err error) error {
	if err == nil || !a.Listed {
		return err
	}
	return fmt.Errorf("account %s: %w", a.Name, err)
}

// LinePrefix starts the account's lines of a command's output among other accounts' lines:
// "account acme: "; "" for the one account of a configuration without accounts.
func (a *Account) LinePrefix() string {
	if !a.Listed {
		return ""
	}
	return "account " + a.Name + ": "
}

// Logger is log for the account's work: with the account named, when it is one of accounts:.
func (a *Account) Logger(log *slog.Logger) *slog.Logger {
	if !a.Listed {
		return log
	}
	return log.With("account", a.Name)
}

// EnvVar is the variable that sets key (a dotted path: source.api_key) for the account:
// HRSYNC_ACCOUNTS_<NAME>_SOURCE_API_KEY for an account of accounts:, HRSYNC_SOURCE_API_KEY for
// the top-level one.
func (a *Account) EnvVar(key string) string {
	prefix := "HRSYNC_"
	if a.Listed {
		prefix = accountsEnvPrefix + envName(a.Name) + "_"
	}
	return prefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}
