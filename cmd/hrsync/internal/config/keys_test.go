package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

// TestWeakServeKeysRefused: a serve key under 128 bits is refused wherever it is taken
// (serve.api_keys, HRSYNC_SERVE_API_KEYS, serve.keys key and key_file, serve.api_key_file),
// naming the key by position or name, never its value, and saying how to make one.
func TestWeakServeKeysRefused(t *testing.T) {
	const weak = "short"
	keyFile := filepath.Join(t.TempDir(), "dash.key")
	if err := os.WriteFile(keyFile, []byte(weak+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	apiKeyFile := filepath.Join(t.TempDir(), "hrsync.key")
	if err := os.WriteFile(apiKeyFile, []byte("# keys\nk1-4f9a0c7e2b1d8e6f3a5c9b0d\n"+weak+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, config string
		env          []string
		want         string
	}{
		{"serve.api_keys", "serve:\n  api_keys: [k1-4f9a0c7e2b1d8e6f3a5c9b0d, " + weak + "]\n", nil, "config: serve.api_keys: key 2: key too weak"},
		{"HRSYNC_SERVE_API_KEYS", "", []string{"HRSYNC_SERVE_API_KEYS=" + weak}, "config: serve.api_keys: key 1: key too weak"},
		{"repeated", "", []string{"HRSYNC_SERVE_API_KEYS=" + strings.Repeat("a", 64)}, "config: serve.api_keys: key 1: key too weak"},
		{"serve.keys key", "serve:\n  keys: [{name: dash, key: " + weak + "}]\n", nil, "config: serve.keys dash: key: key too weak"},
		{"serve.keys key_file", "serve:\n  keys: [{name: dash, key_file: " + keyFile + "}]\n", nil, "serve: serve.keys dash: key_file " + keyFile + ": key too weak"},
		{"serve.api_key_file", "serve:\n  api_key_file: " + apiKeyFile + "\n", nil, "serve: serve.api_key_file " + apiKeyFile + ": key 2: key too weak"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(sinktest.ConfigFile(t, tt.config), tt.env)
			if err == nil {
				_, _, err = ServeKeys(cfg, slog.New(slog.DiscardHandler))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "openssl rand -hex 32") {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), weak+" ") || strings.Contains(err.Error(), "aaaa") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q shows the key or is not one line", err)
			}
		})
	}
	// The key serve generates when none is configured is strong enough.
	if err := server.CheckKeyStrength(NewAPIKey("hrsync-")); err != nil {
		t.Error(err)
	}
}
