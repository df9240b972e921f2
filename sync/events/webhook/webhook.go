// Package webhook signs and sends the deliveries of joiner, mover and leaver events to their
// subscribers exactly as the Standard Webhooks specification (https://www.standardwebhooks.com)
// says: the headers webhook-id, webhook-timestamp (Unix seconds) and webhook-signature, the
// signature being "v1," + base64 of HMAC-SHA256 over id + "." + timestamp + "." + body, keyed
// with the bytes of a secret written "whsec_" + base64.
//
// Signing is the specification's own reference library's
// (github.com/standard-webhooks/standard-webhooks/libraries/go); this package adds the checks
// on secrets and ids, the request, and the classification of an attempt's outcome. Nothing here
// retries: the caller's policy does, from the Outcome and the wait a receiver asked for.
package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The headers of a signed delivery, as the specification names them.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "hrsync-webhooks/1"

// SecretPrefix begins every secret; base64 (standard, padded) of the key's bytes follows it.
const SecretPrefix = "whsec_"

// MinKeyBytes is the shortest key a secret may hold (192 bits, the specification's minimum);
// NewSecret makes keys of NewKeyBytes.
const (
	MinKeyBytes = 24
	NewKeyBytes = 32
)

// MaxRetryAfter caps the wait a receiver may ask for with Retry-After.
const MaxRetryAfter = time.Hour

// maxDrain is how much of a response's body Send reads before closing it, so that the
// connection can be reused without a receiver making us read without end.
const maxDrain = 64 << 10

// ErrBadSecret is what every error of CheckSecret wraps.
var ErrBadSecret = errors.New("bad secret")

// ErrBadID is what an error about a message id wraps.
var ErrBadID = errors.New("bad message id")

// NewSecret makes a new signing secret, "whsec_" + base64 of 32 random bytes (crypto/rand).
func NewSecret() (string, error) {
	key := make([]byte, NewKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// CheckSecret reports what is wrong with a secret (not whsec_…, not base64, shorter than 24 key
// bytes), never echoing the secret in the error. The error wraps ErrBadSecret.
func CheckSecret(secret string) error {
	encoded, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return fmt.Errorf("webhook: %w: does not begin with %q", ErrBadSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		// A base64.CorruptInputError says only where the input went wrong, not what it holds.
		return fmt.Errorf("webhook: %w: key is not base64: %w", ErrBadSecret, err)
	}
	if len(key) < MinKeyBytes {
		return fmt.Errorf("webhook: %w: key is %d bytes, shorter than %d", ErrBadSecret, len(key), MinKeyBytes)
	}
	return nil
}

// checkID reports what is wrong with a message id: it must be non-empty and visible ASCII only
// (no spaces or control characters), as it travels in a header that a receiver reads back
// byte for byte to verify the signature.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("webhook: %w: empty", ErrBadID)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("webhook: %w: byte %d is not visible ASCII", ErrBadID, i)
		}
	}
	return nil
}

// Sign is the webhook-signature header's value for the message: "v1,<base64 HMAC-SHA256>" of
// id + "." + Unix seconds of at + "." + body, keyed with the secret's key bytes. The secret must
// pass CheckSecret, the id must be non-empty visible ASCII, and at must be after the Unix epoch.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	if err := CheckSecret(secret); err != nil {
		return "", err
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	if at.Unix() <= 0 {
		return "", errors.New("webhook: timestamp is not after the unix epoch")
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		// Unreachable after CheckSecret; the library's error holds no key material.
		return "", fmt.Errorf("webhook: sign: %w", err)
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		return "", fmt.Errorf("webhook: sign: %w", err)
	}
	return sig, nil
}

// NewRequest is the POST of body to url, signed: Content-Type application/json, webhook-id,
// webhook-timestamp (Unix seconds), webhook-signature, User-Agent "hrsync-webhooks/1". The url
// must be absolute http or https.
func NewRequest(ctx context.Context, url, secret, id string, at time.Time, body []byte) (*http.Request, error) {
	if err := checkURL(url); err != nil {
		return nil, err
	}
	sig, err := Sign(secret, id, at, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook: new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	return req, nil
}

// checkURL reports a url that is not absolute http or https.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook: url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("webhook: url: scheme is not http or https")
	}
	if u.Host == "" {
		return errors.New("webhook: url: no host")
	}
	return nil
}

// Outcome is what one attempt came to.
type Outcome int

// The outcomes of an attempt.
const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = iota
	// Retry: the attempt failed in a way that may pass later (transport error, 408, 425, 429, 5xx).
	Retry
	// Rejected: the receiver refused the message (any other status). The caller's policy still
	// retries it, but reports it as refused.
	Rejected
)

// String is the outcome's name in logs and metrics: delivered, retry or rejected.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Retry:
		return "retry"
	case Rejected:
		return "rejected"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Classify is the outcome of an attempt: 2xx Delivered; 408, 425, 429 and 5xx, and every
// transport error (refused, reset, timeout, context deadline) Retry; other statuses Rejected
// (the receiver refuses the message: still retried by the caller's policy, but reported as
// such). RetryAfter is the wait a 429/503 asked for via Retry-After (seconds or HTTP date),
// capped at 1 hour, 0 when none. An HTTP date is taken relative to the response's Date header
// when it has a valid one (so that clock skew does not count), else to now.
func Classify(resp *http.Response, err error) (o Outcome, retryAfter time.Duration) {
	if err != nil || resp == nil {
		return Retry, 0
	}
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return Delivered, 0
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return Retry, parseRetryAfter(resp.Header, time.Now())
	case code == http.StatusRequestTimeout || code == http.StatusTooEarly || (code >= 500 && code <= 599):
		return Retry, 0
	}
	return Rejected, 0
}

// parseRetryAfter is the wait the Retry-After header asks for, capped at MaxRetryAfter, 0 when
// absent, invalid or in the past.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter // only a range error is possible: too many seconds
		}
		return time.Duration(secs) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	wait := at.Sub(now)
	switch {
	case wait <= 0:
		return 0
	case wait > MaxRetryAfter:
		return MaxRetryAfter
	}
	return wait.Round(time.Second)
}

// isDigits says whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Send delivers body to url, signed (see NewRequest), with client (http.DefaultClient when nil),
// and says what came of it: the outcome, the wait the receiver asked for (see Classify), the
// status (0 on a transport error) and an error unless delivered. It reads at most 64 KiB of the
// response's body before closing it. It does not follow redirects: a signed message goes only
// where it was sent, and a 3xx is Rejected. A request that cannot be built (bad url, secret, id
// or time) is Rejected with status 0. No error holds the secret or the body.
func Send(ctx context.Context, client *http.Client, url, secret, id string, at time.Time, body []byte) (Outcome, time.Duration, int, error) {
	req, err := NewRequest(ctx, url, secret, id, at, body)
	if err != nil {
		return Rejected, 0, 0, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		o, wait := Classify(nil, err)
		return o, wait, 0, fmt.Errorf("webhook: send: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	o, wait := Classify(resp, nil)
	if o != Delivered {
		return o, wait, resp.StatusCode, fmt.Errorf("webhook: send: receiver answered %d (%s)", resp.StatusCode, o)
	}
	return o, wait, resp.StatusCode, nil
}
