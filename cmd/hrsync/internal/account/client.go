package account

import (
	"fmt"
	"log/slog"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/prometheus/client_golang/prometheus"
)

// CheckSource says what the account's source settings lack, before a command opens the
// warehouse its client then paces on.
func CheckSource(a *config.Account) error {
	where := func(key string) string {
		if a.Listed {
			return "accounts[" + a.Name + "]." + key + ", " + a.EnvVar(key)
		}
		return key + ", " + a.EnvVar(key)
	}
	if a.Source.URL == "" {
		return a.Wrap(fmt.Errorf("source URL: not set (%s)", where("source.url")))
	}
	if a.Source.APIKey == "" {
		return a.Wrap(fmt.Errorf("source API key: not set (%s, or source.api_key_file)", where("source.api_key")))
	}
	return nil
}

// NewClient builds a client of the account, paced at its source.rate_limit; a process makes
// one per account and shares it, so everything it sends the account counts against one budget.
// With source.shared_budget (the default) and a store, that budget is the account's in the
// warehouse, shared with every other hrsync process of the account (sink.Budget); without a
// store (demo) or with shared_budget off, the process paces itself alone. reg, when not nil,
// gets the shared budget's metrics.
func NewClient(a *config.Account, log *slog.Logger, store *sink.Store, reg prometheus.Registerer, opts client.Options) (*client.Client, error) {
	c, b, err := NewBudgetedClient(a, log, store, opts)
	if err != nil {
		return nil, err
	}
	if b != nil && reg != nil {
		if err := reg.Register(prom.NewBudgetCollector(b)); err != nil {
			return nil, fmt.Errorf("register the request budget's metrics: %w", err)
		}
	}
	return c, nil
}

// NewBudgetedClient is NewClient without the metrics: the client, and its shared budget when
// it has one (nil otherwise), whose waits the caller exports (the worker adds up those of its
// runs').
func NewBudgetedClient(a *config.Account, log *slog.Logger, store *sink.Store, opts client.Options) (*client.Client, *sink.Budget, error) {
	if err := CheckSource(a); err != nil {
		return nil, nil, err
	}
	opts.RateLimit, opts.Logger = a.Source.RateLimit, log
	var b *sink.Budget
	if SharesBudget(a) && store != nil {
		var err error
		b, err = store.NewBudget(sink.BudgetOptions{Account: a.Source.Account, PerMinute: a.Source.RateLimit,
			Share: a.Source.BudgetShare, Logger: log})
		if err != nil {
			return nil, nil, a.Wrap(err)
		}
		opts.Budget = b
	}
	c, err := client.New(a.Source.URL, a.Source.APIKey, opts)
	if err != nil {
		return nil, nil, a.Wrap(err)
	}
	return c, b, nil
}

// SharesBudget is whether the account's clients pace on its budget in the warehouse.
func SharesBudget(a *config.Account) bool { return a.Source.SharedBudget && a.Source.RateLimit > 0 }
