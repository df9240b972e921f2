package onboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v4"
)

// A notification tells a chat channel (Slack, Microsoft Teams, or anything taking a JSON body
// {"text": "..."} on a webhook) that a file of the drop folder was filed: in processed/ or in
// failed/, with its counts and where its report is. By default it names no one: a channel is
// not where personal data goes unless its owner says so (NotifyOptions.Names). The webhook's
// address often carries its secret (Slack's do): it is never logged, nor is an error holding it.

// Defaults of NotifyOptions.
const (
	DefaultNotifyAttempts = 5
	DefaultNotifyTimeout  = 10 * time.Second
	defaultNotifyInitial  = time.Second
	defaultNotifyMax      = 30 * time.Second
	defaultNotifyQueue    = 64
	// maxNamesNoticed bounds the rows a notification names (NotifyOptions.Names): the report
	// has them all.
	maxNamesNoticed = 20
)

// NotifyOptions configures a Notifier.
type NotifyOptions struct {
	// URL is the webhook (onboarding.notify.url): a secret, never logged.
	URL string
	// Names lets a notification name the people of the rows someone has to act on (rejected,
	// unresolved, skipped), by line and name, never email (onboarding.notify.names). Off, it
	// names no one.
	Names bool
	// Account, when set, is named in each notification (a worker of several accounts).
	Account string
	// Attempts bounds the tries of one notification (default DefaultNotifyAttempts); between
	// them it waits with exponential backoff from RetryInitial (1 s) up to RetryMax (30 s).
	Attempts               int
	RetryInitial, RetryMax time.Duration
	// Timeout bounds each try (default DefaultNotifyTimeout).
	Timeout time.Duration
	// Queue bounds the notifications waiting to be sent (default 64): one more is dropped,
	// counted failed and logged, rather than hold onboarding up.
	Queue int
	// Client sends the requests (default: a client following no redirects).
	Client *http.Client
	// Metrics counts each notification sent or failed (hrsync_onboarding_notifications_total).
	Metrics *Metrics
	Logger  *slog.Logger
}

// Notifier sends notifications to a webhook in the background, one at a time, each retried with
// backoff and bounded: Notify never waits for the webhook. Close sends what is queued, within
// its context.
type Notifier struct {
	opts   NotifyOptions
	host   string // the webhook's host: what the logs name of it
	log    *slog.Logger
	queue  chan string
	ctx    context.Context // canceled by Close when its context ends first
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

// NewNotifier checks opts.URL (an absolute http or https address) and starts the Notifier's
// sender. The error never holds the URL.
func NewNotifier(opts NotifyOptions) (*Notifier, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("onboarding.notify.url must be an absolute http(s) address (a Slack or Teams incoming webhook)")
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultNotifyAttempts
	}
	if opts.RetryInitial <= 0 {
		opts.RetryInitial = defaultNotifyInitial
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = defaultNotifyMax
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultNotifyTimeout
	}
	if opts.Queue <= 0 {
		opts.Queue = defaultNotifyQueue
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{opts: opts, host: u.Host, log: opts.Logger, queue: make(chan string, opts.Queue),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go n.run()
	return n, nil
}

// Notify queues the notification of r, a file of the drop folder filed with its report at
// report (relative to the folder), and returns at once. A nil Notifier does nothing. One that is
// closed, or whose queue is full, counts it failed.
func (n *Notifier) Notify(r FileResult, report string) {
	if n == nil {
		return
	}
	text := NoticeText(r, report, n.opts.Account, n.opts.Names)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.failed(r.Name, 0, errors.New("hrsync is stopping"))
		return
	}
	select {
	case n.queue <- text:
	default:
		n.failed(r.Name, 0, fmt.Errorf("%d notifications are waiting for the webhook already", cap(n.queue)))
	}
}

// Close stops taking notifications and waits until those queued are sent, or ctx ends: then
// the one being sent is stopped, and it and those still queued are counted failed.
func (n *Notifier) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.queue)
	}
	n.mu.Unlock()
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
		n.cancel()
		<-n.done // each try is bounded, and stops at once when canceled
		return fmt.Errorf("onboarding notifications: %w", ctx.Err())
	}
}

// run sends the queued notifications one at a time.
func (n *Notifier) run() {
	defer close(n.done)
	defer n.cancel()
	for text := range n.queue {
		n.send(text)
	}
}

// send posts one notification, retried with backoff up to opts.Attempts tries.
func (n *Notifier) send(text string) {
	body, err := json.Marshal(struct {
		Text string `json:"text"`
	}{text})
	if err != nil { // a string always marshals
		n.failed("", 0, err)
		return
	}
	bo := backoff.WithContext(backoff.WithMaxRetries(backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(n.opts.RetryInitial),
		backoff.WithMaxInterval(n.opts.RetryMax),
		backoff.WithMaxElapsedTime(0), // bounded by the tries
	), uint64(n.opts.Attempts-1)), n.ctx)
	tries := 0
	err = backoff.Retry(func() error {
		tries++
		return n.post(body)
	}, bo)
	if err != nil {
		n.failed(fileOf(text), tries, err)
		return
	}
	n.opts.Metrics.notice(NoticeSent)
}

// post makes one try: an answer 2xx is sent; 408, 429 and 5xx, or no answer, are tried again;
// any other answer is final (the webhook refuses: a wrong or revoked address).
func (n *Notifier) post(body []byte) error {
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opts.URL, bytes.NewReader(body))
	if err != nil {
		return backoff.Permanent(errors.New("the webhook's address cannot be used"))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		if n.ctx.Err() != nil {
			return backoff.Permanent(errors.New("hrsync stopped before the webhook answered"))
		}
		return withoutURL(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("the webhook answered %d", c)
	default:
		return backoff.Permanent(fmt.Errorf("the webhook answered %d (a wrong, revoked or redirected address? check onboarding.notify.url)", c))
	}
}

// failed counts and logs a notification that was not sent: the file's name and the webhook's
// host, never its address.
func (n *Notifier) failed(file string, tries int, err error) {
	n.opts.Metrics.notice(NoticeFailed)
	args := []any{"host", n.host, "err", err.Error()}
	if file != "" {
		args = append(args, "file", file)
	}
	if tries > 0 {
		args = append(args, "tries", tries)
	}
	n.log.Warn("onboarding: a notification to the webhook (onboarding.notify) was not sent; the file's report is in the drop folder", args...)
}

// withoutURL is err without the request's address: net/http's errors (*url.Error) begin with
// it, and a webhook's address holds its secret.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		what := "no answer from the webhook"
		if ue.Timeout() {
			what = "the webhook did not answer in time"
		}
		// The cause, from the transport: a refused connection, a name not found, a TLS
		// failure. It names the host, not the path.
		return fmt.Errorf("%s: %s", what, strings.ReplaceAll(ue.Err.Error(), ue.URL, "[webhook]"))
	}
	return err
}

// noticeFile marks the file's name in a notification's text, for fileOf: "file: " … "\n".
const noticeFile = "\nfile: "

// fileOf is the file's name a notification's text holds, for the log of one not sent.
func fileOf(text string) string {
	_, rest, ok := strings.Cut(text, noticeFile)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "\n")
	return name
}

// NoticeText is what a notification says of r, a file filed in the drop folder with its report
// at report (relative to the folder): how the file ended and what to do, the counts of its
// rows, the file's name and its report's path; with names, the line, name and outcome of each
// row someone has to act on (never an email). Text from the file (its name, people's names) has
// control characters replaced, and &, < and > escaped as Slack asks (so a name cannot mention
// a channel); Teams shows them as written.
func NoticeText(r FileResult, report, account string, names bool) string {
	var b strings.Builder
	b.WriteString("hrsync onboarding")
	if account != "" {
		b.WriteString(" (account " + chatSafe(account) + ")")
	}
	b.WriteString(": ")
	switch r.Outcome() {
	case FileDone:
		b.WriteString("a file is done, every row onboarded.")
	case FilePartlyRejected:
		b.WriteString("a file is processed, but some rows were rejected: see its report, correct them and drop them again.")
	case FileRejected:
		b.WriteString("a file failed: nobody could be onboarded, its rows were rejected. It is in failed/: see its report, correct the rows and drop the file again.")
	case FileUnreadable:
		b.WriteString("a file failed: it is not a CSV of new hires. It is in failed/: its report says why; save it as CSV UTF-8 and drop it again.")
	default:
		b.WriteString("a file is not finished: rows are unresolved (the HR system could not be reached, or did not confirm them). It is in failed/ and retried on its own; nobody is created twice.")
	}
	b.WriteString(noticeFile + chatSafe(r.Name))
	fmt.Fprintf(&b, "\n%d created, %d already done, %d skipped, %d rejected, %d unresolved",
		r.Count(OutcomeCreated), r.Count(OutcomeAlreadyDone), r.Count(OutcomeSkipped), r.Count(OutcomeRejected), r.Count(OutcomeUnresolved))
	if report != "" {
		b.WriteString("\nreport: " + chatSafe(report) + " in the onboarding folder")
	}
	if !names {
		return b.String()
	}
	shown := 0
	for _, x := range r.Rows {
		switch x.Outcome {
		case OutcomeRejected, OutcomeUnresolved, OutcomeSkipped:
		default:
			continue
		}
		if shown++; shown > maxNamesNoticed {
			continue
		}
		b.WriteString("\nline " + strconv.Itoa(x.Line) + ": ")
		if name := strings.TrimSpace(x.FirstName + " " + x.LastName); name != "" {
			b.WriteString(chatSafe(name) + ": ")
		}
		b.WriteString(x.Outcome)
	}
	if shown > maxNamesNoticed {
		fmt.Fprintf(&b, "\n… %d more in the report", shown-maxNamesNoticed)
	}
	return b.String()
}

// chatSafe is s for a chat message: control characters (line breaks included) and invalid
// UTF-8 as ?, and Slack's markup characters escaped.
func chatSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
