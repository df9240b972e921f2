package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/v1"
)

// TestEventsSettings: the events section's defaults, its keys from the file and the
// environment, and webhooks read with their secrets and scopes.
func TestEventsSettings(t *testing.T) {
	t.Parallel()
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: /data/hrsync.db}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Accounts[0]
	if a.Events.Zone.String() != "Europe/London" || a.Events.MaxLeavers != 5 || a.Events.MaxLeaverShare != 0.05 ||
		a.RetryFor != 72*time.Hour || a.Timeout != 10*time.Second || a.RetryBackoff != 5*time.Second || len(a.Webhooks) != 0 {
		t.Errorf("defaults: %+v, retry %s/%s/%s, webhooks %v", a.Events, a.RetryFor, a.Timeout, a.RetryBackoff, a.Webhooks)
	}
	secretFile := filepath.Join(t.TempDir(), "idp-secret")
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: /data/hrsync.db}
events:
  time_zone: America/New_York
  webhooks:
    - {name: idp, url: "https://idp.example.com/hook", secret_file: `+secretFile+`, deny_classes: [health]}
    - {name: local, url: "http://127.0.0.1:9000/hook", secret: `+secret+`}
`), []string{"HRSYNC_EVENTS_MAX_LEAVERS=12", "HRSYNC_EVENTS_RETRY_BACKOFF=1s"})
	if err != nil {
		t.Fatal(err)
	}
	a = s.Accounts[0]
	if a.Events.Zone.String() != "America/New_York" || a.Events.MaxLeavers != 12 || a.RetryBackoff != time.Second {
		t.Errorf("set: %+v, backoff %s", a.Events, a.RetryBackoff)
	}
	if len(a.Webhooks) != 2 || a.Webhooks[0].Secret != secret || a.Webhooks[0].Scope.DenyClasses[0] != v1.Health || !a.Webhooks[0].Scope.ReadOnly ||
		a.Webhooks[1].URL != "http://127.0.0.1:9000/hook" {
		t.Errorf("webhooks: %+v", a.Webhooks)
	}
}

// TestEventsSettingsErrors: each mistake in the events section is one line naming the key, and
// never the secret.
func TestEventsSettingsErrors(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	for _, tt := range []struct{ section, want string }{
		{"time_zone: Mars/Olympus", "events.time_zone"},
		{"max_leavers: 0", "events.max_leavers"},
		{"max_leaver_share: 1.5", "events.max_leaver_share"},
		{"retry_for: 10s", "events.retry_for"},
		{"timeout: 10m", "events.timeout"},
		{"retry_backoff: 2h", "events.retry_backoff"},
		{"webhooks: [{url: 'https://a.example/h', secret: " + secret + "}]", "events.webhooks 1: give it a name"},
		{"webhooks: [{name: a, url: 'http://a.example/h', secret: " + secret + "}]", "events.webhooks a: url: want an https://"},
		{"webhooks: [{name: a, url: 'https://a.example/h'}]", "events.webhooks a: give secret or secret_file"},
		{"webhooks: [{name: a, url: 'https://a.example/h', secret: whsec_short}]", "events.webhooks a:"},
		{"webhooks: [{name: a, url: 'https://a.example/h', secret: " + secret + "}, {name: a, url: 'https://b.example/h', secret: " + secret + "}]", "events.webhooks a: named twice"},
		{"webhooks: [{name: a, url: 'https://a.example/h', secret: " + secret + ", deny_classes: [secretive]}]", "events.webhooks a:"},
	} {
		_, err := Load(sinktest.ConfigFile(t, "warehouse: {url: /data/hrsync.db}\nevents: {"+tt.section+"}\n"), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "MfKQ9r8G") {
			t.Errorf("%s: %v, want one line with %q and no secret", tt.section, err, tt.want)
		}
	}
}

// TestWebhookSecretsAreRedacted: a webhook's signing secret, and its key without the prefix,
// never reach a log line.
func TestWebhookSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: /data/hrsync.db}\nevents: {webhooks: [{name: a, url: 'https://a.example/h', secret: "+secret+"}]}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets := s.Secrets()
	for _, want := range []string{secret, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} {
		if !slices.Contains(secrets, want) {
			t.Errorf("Secrets() lacks %s…", want[:8])
		}
	}
}
