package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggerRedactsSecrets: the process's logger (Settings.Logger) writes no configured secret
// (the source API key, the warehouse password, a serve key; as is or percent-encoded) whatever
// the level, the format, or where in the record it is: the message, a string, an error, a group,
// an attribute added by With, a value printed with %+v.
func TestLoggerRedactsSecrets(t *testing.T) {
	const key, password, serveKey = "src-key-5b8e2f", "p@ss/w0rd#9", "serve-key-1c4d7a9e3b6f0a2d5c8e"
	env := []string{"HRSYNC_SOURCE_API_KEY=" + key, "HRSYNC_SOURCE_URL=https://hr.example",
		"HRSYNC_WAREHOUSE_URL=postgres://hr:p%40ss%2Fw0rd%239@db.example/hr", "HRSYNC_SERVE_API_KEYS=" + serveKey,
		"HRSYNC_LOG_LEVEL=debug"}
	forms := []string{key, password, "p%40ss%2Fw0rd%239", "p%40ss%2Fw0rd%239", serveKey}
	for _, format := range []string{"text", "json"} {
		cfg, err := Load("", append(env, "HRSYNC_LOG_FORMAT="+format))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		log := cfg.Logger(&out).With("with", "key "+key, slog.Group("g", "pw", password))
		for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
			log.Log(context.Background(), level, "echo "+key+" "+serveKey, "s", "X-API-KEY: "+key,
				"err", fmt.Errorf("source answered: %w", errors.New("headers map[X-Api-Key:["+key+"]]")),
				slog.Group("grp", slog.String("url", "postgres://hr:p%40ss%2Fw0rd%239@db.example/hr")),
				"struct", struct{ Key, Form string }{key, "k=" + "p%40ss%2Fw0rd%239"},
				"kept", 42)
		}
		got := out.String()
		for _, s := range forms {
			if strings.Contains(got, s) {
				t.Errorf("%s: the log holds %q:\n%s", format, s, got)
			}
		}
		if n := strings.Count(got, "\n"); n != 4 || !strings.Contains(got, Redacted) || !strings.Contains(got, "42") || !strings.Contains(got, "db.example") {
			t.Errorf("%s: %d lines, want 4 with the secrets redacted and the rest kept:\n%s", format, n, got)
		}
	}
}

// TestSecretsSkipsShortOnes: an empty or very short value is no secret to redact (it would
// blank out common words of every line).
func TestSecretsSkipsShortOnes(t *testing.T) {
	cfg, err := Load("", []string{"HRSYNC_WAREHOUSE_URL=postgres://hr:x@db.example/hr"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Secrets() {
		if len(s) < minSecret {
			t.Errorf("secret %q is shorter than %d", s, minSecret)
		}
	}
}

// BenchmarkRedactingHandler: a serve request's line through the redacting handler, with the
// secrets of no account, of one, and of a worker of a thousand (3,000 with their encoded forms).
// Searching each secret in each attribute cost 260 µs a line at 3,000; by their prefixes about
// 5 µs, the same as with 3.
func BenchmarkRedactingHandler(b *testing.B) {
	for _, n := range []int{0, 3, 3000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var secrets []string
			for i := range n {
				secrets = append(secrets, NewAPIKey(fmt.Sprintf("k%d-", i)))
			}
			log := slog.New(RedactingHandler(slog.NewTextHandler(io.Discard, nil), secrets))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("request_id", "01J9ZQ6X5W3V2T1R0P9N8M7K6J"), slog.String("method", "GET"),
					slog.String("path", "/v1/employees?page=3&per_page=100"), slog.Int("status", 200), slog.Int("bytes", 18234),
					slog.String("account", "acme"), slog.String("key", "portal"))
			}
		})
	}
}
