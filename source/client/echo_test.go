package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// echoSecrets are what an echoing source must never get into a log or an error's text: the API
// key it was sent and the new hire's values.
const (
	echoKey   = "echo-key-7f3a9c1d5e"
	echoFirst = "Zorblaxine"
	echoLast  = "Quendrithova"
	echoEmail = "zorblaxine.q@echo.example"
)

// echoForms are the forms of echoSecrets an echo can carry: as sent, and percent-encoded (a form
// body, a query).
func echoForms() []string {
	var out []string
	for _, s := range []string{echoKey, echoFirst, echoLast, echoEmail} {
		out = append(out, s, url.QueryEscape(s))
	}
	return out
}

// echoSource answers every request with an error whose body echoes the request (its headers,
// the key among them, and its body, the hire's values among them), as some gateways and
// misconfigured services do: statuses in turn from statuses.
func echoSource(t *testing.T, statuses ...int) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		echo := fmt.Sprintf("%s %s headers=%v body=%s form=%v", r.Method, r.URL, r.Header, body, form)
		status := statuses[int(n.Add(1)-1)%len(statuses)]
		msg := map[string]any{"type": http.StatusText(status), "message": echo}
		if status == http.StatusUnprocessableEntity || status == http.StatusBadRequest {
			msg["employee[email]"] = []string{echo}
			msg["employee[first_name "+echoFirst+"]"] = []string{"is odd: " + echo}
		}
		b, _ := json.Marshal(map[string]any{"error": msg})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEchoingSourceReachesNoLog: a source that echoes the request into its error bodies gets
// neither the API key nor a new hire's name or email into the client's log (every level) or
// into the text of the errors it returns (which callers log); the field problems of a refused
// create are still there for the private report, through errors.As.
func TestEchoingSourceReachesNoLog(t *testing.T) {
	t.Parallel()
	ne := v1.NewEmployee{FirstName: echoFirst, LastName: echoLast, Email: echoEmail, JoinDate: "2026-12-01"}
	for _, tc := range []struct {
		name     string
		statuses []int
		call     func(c *Client) error
	}{
		{"a list answered 500 (retried) then 400", []int{500, 500, 400}, func(c *Client) error {
			_, _, err := c.ListEmployees(context.Background(), 1)
			return err
		}},
		{"a list answered 503 until the retries run out", []int{503}, func(c *Client) error {
			_, _, err := c.ListEmployees(context.Background(), 1)
			return err
		}},
		{"a create answered 422", []int{422}, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), ne)
			var verr *v1.ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 || !strings.Contains(fmt.Sprint(verr.Problems), echoEmail) {
				t.Errorf("a refused create: %v, want its field problems kept (for the report)", err)
			}
			return err
		}},
		{"a create answered 400", []int{400}, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), ne)
			return err
		}},
		{"a create answered 500", []int{500}, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), ne)
			return err
		}},
		{"a create answered 502", []int{502}, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), ne)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := echoSource(t, tc.statuses...)
			var logs strings.Builder
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
			c, err := New(srv.URL, echoKey, Options{Logger: log, MaxAttempts: 3, RetryInitial: time.Millisecond, RetryMax: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(c)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "source") {
				t.Errorf("error %q does not say the source refused", err)
			}
			for _, s := range echoForms() {
				if strings.Contains(logs.String(), s) {
					t.Errorf("the log holds %q:\n%s", s, logs.String())
				}
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error holds %q: %s", s, err)
				}
			}
		})
	}
}
