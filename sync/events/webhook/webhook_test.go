package webhook_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hrsync/hrsync/sync/events/webhook"
)

// The specification's test vector, from the reference library's own Go tests: TestWebhookSign
// in go/webhook_test.go of github.com/standard-webhooks/standard-webhooks/libraries v0.0.1 (the
// same vector is in its C#, Java, PHP and Python tests).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// newSecret is a fresh secret or the end of the test.
func newSecret(t testing.TB) string {
	t.Helper()
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// headers are the signed headers of a message, as a receiver sees them.
func headers(id string, at time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	return h
}

// verifier is the reference library's verifier for secret.
func verifier(t testing.TB, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

func TestSignVector(t *testing.T) {
	t.Parallel()
	got, err := webhook.Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if got != vectorSignature {
		t.Fatalf("Sign = %q, want the specification's %q", got, vectorSignature)
	}
	// The time's zone and sub-second part do not count: only its Unix seconds are signed.
	at := time.Unix(vectorTimestamp, 999_999_999).In(time.FixedZone("X", 5*3600))
	if got, _ := webhook.Sign(vectorSecret, vectorID, at, []byte(vectorBody)); got != vectorSignature {
		t.Fatalf("Sign at %v = %q, want %q", at, got, vectorSignature)
	}
}

func TestSignVerifies(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	other := newSecret(t)
	now := time.Now()
	tests := []struct {
		name string
		id   string
		at   time.Time
		body []byte
	}{
		{"joiner", "msg_2ZjJ1yDq8mHx0a", now, []byte(`{"type":"employee.joined","data":{"id":"E1"}}`)},
		{"empty body", "evt-1", now.Add(-4 * time.Minute), nil},
		{"future within tolerance", "01J8Z6W3K5Q9", now.Add(4 * time.Minute), []byte(`{}`)},
		{"id with dots", "a.b.c", now, []byte(`{"x":"1.2.3"}`)},
		{"binary body", "msg_bin", now, []byte{0, 1, 2, 0xff, '.', '\n'}},
		{"unicode body", "msg_u", now, []byte(`{"name":"Zoë Łukasiewicz"}`)},
		{"large body", "msg_large", now, bytes.Repeat([]byte("a"), 1<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig, err := webhook.Sign(secret, tt.id, tt.at, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(sig, "v1,") {
				t.Fatalf("signature %q does not begin with v1,", sig)
			}
			if err := verifier(t, secret).Verify(tt.body, headers(tt.id, tt.at, sig)); err != nil {
				t.Fatalf("reference Verify: %v", err)
			}

			changed := append(bytes.Clone(tt.body), ' ')
			for _, bad := range []struct {
				what   string
				secret string
				id     string
				at     time.Time
				body   []byte
			}{
				{"body", secret, tt.id, tt.at, changed},
				{"id", secret, tt.id + "x", tt.at, tt.body},
				{"timestamp", secret, tt.id, tt.at.Add(-time.Second), tt.body},
				{"secret", other, tt.id, tt.at, tt.body},
			} {
				err := verifier(t, bad.secret).Verify(bad.body, headers(bad.id, bad.at, sig))
				if !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
					t.Errorf("changed %s: Verify = %v, want ErrNoMatchingSignature", bad.what, err)
				}
			}
		})
	}

	// Long past timestamps sign too; the reference verifier's tolerance aside, they verify.
	for _, at := range []time.Time{time.Unix(1, 0), time.Unix(vectorTimestamp, 0), time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC)} {
		sig, err := webhook.Sign(secret, "msg_old", at, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := verifier(t, secret).VerifyIgnoringTimestamp([]byte(`{}`), headers("msg_old", at, sig)); err != nil {
			t.Errorf("at %v: reference VerifyIgnoringTimestamp: %v", at, err)
		}
	}
}

func TestSignRefuses(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	tests := []struct {
		name   string
		secret string
		id     string
		at     time.Time
		want   error
	}{
		{"bad secret", "whsec_short", "msg_1", time.Now(), webhook.ErrBadSecret},
		{"empty id", secret, "", time.Now(), webhook.ErrBadID},
		{"id with space", secret, "msg 1", time.Now(), webhook.ErrBadID},
		{"id with newline", secret, "msg\n1", time.Now(), webhook.ErrBadID},
		{"id not ASCII", secret, "msg_é", time.Now(), webhook.ErrBadID},
		{"zero time", secret, "msg_1", time.Time{}, nil},
		{"epoch", secret, "msg_1", time.Unix(0, 0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig, err := webhook.Sign(tt.secret, tt.id, tt.at, []byte(`{}`))
			if err == nil {
				t.Fatalf("Sign = %q, want an error", sig)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "webhook: ") {
				t.Errorf("err %q does not begin with webhook: ", err)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := newSecret(t), newSecret(t)
	if a == b {
		t.Fatal("two new secrets are the same")
	}
	for _, s := range []string{a, b} {
		if err := webhook.CheckSecret(s); err != nil {
			t.Fatalf("CheckSecret(NewSecret()): %v", err)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if !strings.HasPrefix(s, "whsec_") || err != nil || len(key) != 32 {
			t.Fatalf("new secret is not whsec_ + base64 of 32 bytes (%d bytes, %v)", len(key), err)
		}
	}
}

func TestCheckSecret(t *testing.T) {
	t.Parallel()
	key24 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 24))
	key23 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a}, 23))
	tests := []struct {
		name    string
		secret  string
		wantErr string // in the error's text; "" for a good secret
	}{
		{"24 bytes", "whsec_" + key24, ""},
		{"spec vector", vectorSecret, ""},
		{"empty", "", "does not begin with"},
		{"no prefix", key24, "does not begin with"},
		{"other prefix", "whsek_" + key24, "does not begin with"},
		{"upper-case prefix", "WHSEC_" + key24, "does not begin with"},
		{"not base64", "whsec_s3cr3t!pa$$word#hunter2hunter2hunter2", "not base64"},
		{"url-safe base64", "whsec_" + strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff}, 16))), "not base64"},
		{"unpadded", "whsec_" + base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 31)), "not base64"},
		{"23 bytes", "whsec_" + key23, "shorter than 24"},
		{"empty key", "whsec_", "shorter than 24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := webhook.CheckSecret(tt.secret)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckSecret: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckSecret accepted a bad secret")
			}
			if !errors.Is(err, webhook.ErrBadSecret) {
				t.Errorf("err %v does not wrap ErrBadSecret", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) || !strings.HasPrefix(msg, "webhook: ") {
				t.Errorf("err = %q, want webhook: …%s…", msg, tt.wantErr)
			}
			if s := tt.secret; len(s) >= 8 && (strings.Contains(msg, s) || strings.Contains(msg, s[len(s)-8:])) {
				t.Errorf("err %q echoes the secret", msg)
			}
		})
	}
}

func TestNewRequest(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	body := []byte(`{"type":"employee.left","data":{"id":"E7"}}`)
	at := time.Now()

	// A receiver built on the reference library.
	var accepted atomic.Int32
	wh := verifier(t, secret)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := wh.Verify(got, r.Header); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		accepted.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	req, err := webhook.NewRequest(t.Context(), srv.URL+"/hooks/hr", secret, "msg_42", at, body)
	if err != nil {
		t.Fatal(err)
	}
	wantSig, _ := webhook.Sign(secret, "msg_42", at, body)
	for name, want := range map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "hrsync-webhooks/1",
		"webhook-id":        "msg_42",
		"webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
		"webhook-signature": wantSig,
	} {
		if got := req.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if req.Method != http.MethodPost || req.URL.Path != "/hooks/hr" || req.ContentLength != int64(len(body)) {
		t.Errorf("request is %s %s (%d bytes), want POST /hooks/hr (%d bytes)", req.Method, req.URL.Path, req.ContentLength, len(body))
	}

	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || accepted.Load() != 1 {
		t.Fatalf("receiver answered %d %s, want 204", resp.StatusCode, msg)
	}

	// Send, to the same receiver: delivered; with another secret: refused.
	o, wait, status, err := webhook.Send(t.Context(), srv.Client(), srv.URL, secret, "msg_43", time.Now(), body)
	if o != webhook.Delivered || wait != 0 || status != http.StatusNoContent || err != nil {
		t.Fatalf("Send = %v, %v, %d, %v; want delivered, 0, 204, nil", o, wait, status, err)
	}
	o, _, status, err = webhook.Send(t.Context(), srv.Client(), srv.URL, newSecret(t), "msg_44", time.Now(), body)
	if o != webhook.Rejected || status != http.StatusUnauthorized || err == nil {
		t.Fatalf("Send with another secret = %v, %d, %v; want rejected, 401, an error", o, status, err)
	}

	// Bad arguments are refused before anything is sent.
	for _, url := range []string{"", "ftp://example.com/x", "/relative", "http://"} {
		if _, err := webhook.NewRequest(t.Context(), url, secret, "msg_1", at, body); err == nil {
			t.Errorf("NewRequest to %q: no error", url)
		}
	}
	if _, err := webhook.NewRequest(t.Context(), srv.URL, "whsec_bad", "msg_1", at, body); !errors.Is(err, webhook.ErrBadSecret) {
		t.Errorf("NewRequest with a bad secret: err = %v, want ErrBadSecret", err)
	}
	if accepted.Load() != 2 {
		t.Errorf("receiver accepted %d messages, want 2", accepted.Load())
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	resp := func(code int, h ...string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{}}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	tests := []struct {
		name string
		resp *http.Response
		err  error
		want webhook.Outcome
		wait time.Duration
	}{
		{"200", resp(200), nil, webhook.Delivered, 0},
		{"204", resp(204), nil, webhook.Delivered, 0},
		{"202 with Retry-After", resp(202, "Retry-After", "30"), nil, webhook.Delivered, 0},
		{"408", resp(408), nil, webhook.Retry, 0},
		{"425", resp(425), nil, webhook.Retry, 0},
		{"429", resp(429), nil, webhook.Retry, 0},
		{"429 seconds", resp(429, "Retry-After", "120"), nil, webhook.Retry, 2 * time.Minute},
		{"429 zero seconds", resp(429, "Retry-After", "0"), nil, webhook.Retry, 0},
		{"429 seconds capped", resp(429, "Retry-After", "86400"), nil, webhook.Retry, time.Hour},
		{"429 seconds overflow", resp(429, "Retry-After", "99999999999999999999999"), nil, webhook.Retry, time.Hour},
		{"429 negative", resp(429, "Retry-After", "-5"), nil, webhook.Retry, 0},
		{"429 garbage", resp(429, "Retry-After", "soon"), nil, webhook.Retry, 0},
		{"500", resp(500), nil, webhook.Retry, 0},
		{"500 Retry-After ignored", resp(500, "Retry-After", "60"), nil, webhook.Retry, 0},
		{"502", resp(502), nil, webhook.Retry, 0},
		{"503", resp(503), nil, webhook.Retry, 0},
		{"503 seconds", resp(503, "Retry-After", " 7 "), nil, webhook.Retry, 7 * time.Second},
		{"503 HTTP date", resp(503, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(90*time.Second).Format(http.TimeFormat)), nil, webhook.Retry, 90 * time.Second},
		{"503 HTTP date RFC 850", resp(503, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(time.Minute).Format("Monday, 02-Jan-06 15:04:05 GMT")), nil, webhook.Retry, time.Minute},
		{"503 HTTP date capped", resp(503, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(48*time.Hour).Format(http.TimeFormat)), nil, webhook.Retry, time.Hour},
		{"503 HTTP date past", resp(503, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(-time.Minute).Format(http.TimeFormat)), nil, webhook.Retry, 0},
		{"504", resp(504), nil, webhook.Retry, 0},
		{"599", resp(599), nil, webhook.Retry, 0},
		{"400", resp(400), nil, webhook.Rejected, 0},
		{"401", resp(401), nil, webhook.Rejected, 0},
		{"404", resp(404), nil, webhook.Rejected, 0},
		{"410", resp(410), nil, webhook.Rejected, 0},
		{"413", resp(413), nil, webhook.Rejected, 0},
		{"302", resp(302), nil, webhook.Rejected, 0},
		{"transport error", nil, syscall.ECONNRESET, webhook.Retry, 0},
		{"deadline", nil, context.DeadlineExceeded, webhook.Retry, 0},
		{"error with response", resp(200), errors.New("body read"), webhook.Retry, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, wait := webhook.Classify(tt.resp, tt.err)
			if o != tt.want || wait != tt.wait {
				t.Fatalf("Classify = %v, %v; want %v, %v", o, wait, tt.want, tt.wait)
			}
		})
	}
}

// TestClassifyDateNoDateHeader: an HTTP-date Retry-After without a Date header is relative to now.
func TestClassifyDateNoDateHeader(t *testing.T) {
	t.Parallel()
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	resp.Header.Set("Retry-After", time.Now().Add(10*time.Minute).UTC().Format(http.TimeFormat))
	o, wait := webhook.Classify(resp, nil)
	// The date has whole seconds: allow for that, and for a slow machine.
	if o != webhook.Retry || wait < 10*time.Minute-5*time.Second || wait > 10*time.Minute {
		t.Fatalf("Classify = %v, %v; want retry, 10m0s", o, wait)
	}
}

// TestSendStatuses sends to real servers: statuses, Retry-After, a long body (drained) and a
// redirect (not followed).
func TestSendStatuses(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	body := []byte(`{"type":"employee.moved","secret-ish":"payload-marker-7f3a"}`)
	var redirected atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
	}))
	t.Cleanup(target.Close)

	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    webhook.Outcome
		wait    time.Duration
		status  int
	}{
		{"200 long body", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 1<<20))
		}, webhook.Delivered, 0, 200},
		{"429 Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}, webhook.Retry, 30 * time.Second, 429},
		{"503 Retry-After date", func(w http.ResponseWriter, r *http.Request) {
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			w.Header().Set("Retry-After", now.Add(5*time.Minute).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}, webhook.Retry, 5 * time.Minute, 503},
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, webhook.Retry, 0, 500},
		{"410", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusGone)
		}, webhook.Rejected, 0, 410},
		{"302 not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusFound)
		}, webhook.Rejected, 0, 302},
		{"307 not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}, webhook.Rejected, 0, 307},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			o, wait, status, err := webhook.Send(t.Context(), srv.Client(), srv.URL, secret, "msg_s", time.Now(), body)
			if o != tt.want || wait != tt.wait || status != tt.status {
				t.Fatalf("Send = %v, %v, %d, %v; want %v, %v, %d", o, wait, status, err, tt.want, tt.wait, tt.status)
			}
			if (err == nil) != (tt.want == webhook.Delivered) {
				t.Fatalf("Send err = %v with outcome %v", err, o)
			}
			if err != nil {
				checkNoLeak(t, err, secret, body)
			}
		})
	}
	t.Cleanup(func() {
		if n := redirected.Load(); n != 0 {
			t.Errorf("a redirect was followed %d times", n)
		}
	})
}

// TestSendTransportErrors: a refused connection, a receiver that never answers (client timeout,
// context deadline), all Retry with status 0 and no secret or body in the error.
func TestSendTransportErrors(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	body := []byte(`{"type":"employee.joined","data":{"ssn":"payload-marker-9c1e"}}`)

	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Never answers: gives up when the client hangs up (noticed once the body is read) or
		// when the test ends.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(release) }) // runs before silent.Close

	tests := []struct {
		name   string
		url    string
		client *http.Client
		ctx    func(t *testing.T) context.Context
		is     error
	}{
		{"connection refused", closedURL, &http.Client{}, func(t *testing.T) context.Context { return t.Context() }, syscall.ECONNREFUSED},
		{"client timeout", silent.URL, &http.Client{Timeout: 100 * time.Millisecond}, func(t *testing.T) context.Context { return t.Context() }, nil},
		{"context deadline", silent.URL, &http.Client{}, func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, wait, status, err := webhook.Send(tt.ctx(t), tt.client, tt.url, secret, "msg_t", time.Now(), body)
			if o != webhook.Retry || wait != 0 || status != 0 || err == nil {
				t.Fatalf("Send = %v, %v, %d, %v; want retry, 0, 0, an error", o, wait, status, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.is)
			}
			var timeout interface{ Timeout() bool }
			if tt.name == "client timeout" && (!errors.As(err, &timeout) || !timeout.Timeout()) {
				t.Errorf("err = %v, want a timeout", err)
			}
			if !strings.HasPrefix(err.Error(), "webhook: send: ") {
				t.Errorf("err %q does not begin with webhook: send: ", err)
			}
			checkNoLeak(t, err, secret, body)
			if o, _ := webhook.Classify(nil, err); o != webhook.Retry {
				t.Errorf("Classify(nil, %v) = %v, want retry", err, o)
			}
		})
	}
}

// checkNoLeak fails when err's text holds the secret, its key's base64 or the body.
func checkNoLeak(t *testing.T, err error, secret string, body []byte) {
	t.Helper()
	msg := err.Error()
	for _, s := range []string{secret, strings.TrimPrefix(secret, "whsec_"), string(body), "payload-marker"} {
		if strings.Contains(msg, s) {
			t.Errorf("err %q holds the secret or the body", msg)
		}
	}
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[webhook.Outcome]string{webhook.Delivered: "delivered", webhook.Retry: "retry", webhook.Rejected: "rejected", 7: "Outcome(7)"} {
		if got := o.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(o), got, want)
		}
	}
}

// tamper is sig ("v1,<base64>") with the first character of its base64 changed.
func tamper(sig string) string {
	c := byte('A')
	if sig[3] == 'A' {
		c = 'B'
	}
	return sig[:3] + string(c) + sig[4:]
}

// TestPythonVerify checks the docs' Python verifier (testdata/verify.py, standard library only)
// against messages signed by Sign: valid ones pass, tampered ones do not.
func TestPythonVerify(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: cannot check testdata/verify.py")
	}
	secret := newSecret(t)
	now := time.Now()
	body := []byte(`{"type":"employee.joined","data":{"id":"E1","name":"Zoë"}}` + "\n")
	sign := func(secret, id string, at time.Time, body []byte) string {
		sig, err := webhook.Sign(secret, id, at, body)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	good := sign(secret, "msg_py", now, body)
	ts := strconv.FormatInt(now.Unix(), 10)

	tests := []struct {
		name     string
		secret   string
		id, ts   string
		sig      string
		body     []byte
		wantExit int
	}{
		{"valid", secret, "msg_py", ts, good, body, 0},
		{"spec vector, too old", vectorSecret, vectorID, strconv.Itoa(vectorTimestamp), vectorSignature, []byte(vectorBody), 1},
		{"valid among several signatures", secret, "msg_py", ts, "v2,abc v1,AAAA " + good, body, 0},
		{"tampered body", secret, "msg_py", ts, good, append(bytes.Clone(body), ' '), 1},
		{"tampered id", secret, "msg_pz", ts, good, body, 1},
		{"tampered timestamp", secret, "msg_py", strconv.FormatInt(now.Unix()+1, 10), good, body, 1},
		{"tampered signature", secret, "msg_py", ts, tamper(good), body, 1},
		{"other secret", newSecret(t), "msg_py", ts, good, body, 1},
		{"too old", secret, "msg_py", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), sign(secret, "msg_py", now.Add(-10*time.Minute), body), body, 1},
		{"empty body", secret, "msg_e", ts, sign(secret, "msg_e", now, nil), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), python, "testdata/verify.py", tt.id, tt.ts, tt.sig)
			cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+tt.secret)
			cmd.Stdin = bytes.NewReader(tt.body)
			out, err := cmd.CombinedOutput()
			code := 0
			if err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatalf("running verify.py: %v", err)
				}
				code = exit.ExitCode()
			}
			if code != tt.wantExit {
				t.Fatalf("verify.py exited %d, want %d; output: %s", code, tt.wantExit, out)
			}
		})
	}
}

func FuzzSignVerify(f *testing.F) {
	secret, err := webhook.NewSecret()
	if err != nil {
		f.Fatal(err)
	}
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", []byte(`{"test": 2432232314}`))
	f.Add("a.b", []byte("."))
	f.Add("", []byte{})
	f.Add("msg 1", []byte("x"))
	f.Add("~!#$%&'*+-.^_`|", []byte{0, 0xff, '\n', '\r'})
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		at := time.Now()
		sig, err := webhook.Sign(secret, id, at, body)
		if err != nil {
			if !errors.Is(err, webhook.ErrBadID) {
				t.Fatalf("Sign(%q): %v", id, err)
			}
			return
		}
		wh := verifier(t, secret)
		if err := wh.Verify(body, headers(id, at, sig)); err != nil {
			t.Fatalf("Sign(%q, %q) does not verify: %v", id, body, err)
		}
		if err := wh.Verify(append(bytes.Clone(body), 'x'), headers(id, at, sig)); err == nil {
			t.Fatalf("Sign(%q, %q) verifies a longer body", id, body)
		}
		if err := wh.Verify(body, headers(id+"x", at, sig)); err == nil {
			t.Fatalf("Sign(%q, %q) verifies another id", id, body)
		}
	})
}
