package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// TestReadmeQuotesTheseMessages: the docs' examples of what a newcomer sees are what hrsync
// prints: the unknown variable's line (docs/configuration.md), and the start's warning for local
// writes on a replica (docs/serve.md).
func TestReadmeQuotesTheseMessages(t *testing.T) {
	t.Parallel()
	onOneLine := func(name string) string {
		data, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(data)), " ")
	}
	configuration, serve := onOneLine("docs/configuration.md"), onOneLine("docs/serve.md")
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(empty, []string{"HRSYNC_SOURCE_APIKEY=sandbox-x"})
	if err == nil {
		t.Fatal("HRSYNC_SOURCE_APIKEY accepted")
	}
	if line := "hrsync: " + err.Error(); !strings.Contains(configuration, line) {
		t.Errorf("docs/configuration.md does not show\n %s", line)
	}
	var logs strings.Builder
	a := &config.Account{Name: "default", Source: config.SourceConfig{URL: "https://api.example.com/v1", APIKey: "k"}}
	a.ResolveWrites("local")
	account.WarnWrites(a, slog.New(slog.NewTextHandler(&logs, nil)))
	msg, _, _ := strings.Cut(logs.String(), "; ")
	_, msg, _ = strings.Cut(msg, "level=")
	if !strings.Contains(serve, "level="+msg) {
		t.Errorf("docs/serve.md does not show the warning\n level=%s", msg)
	}
}
