package personal

import (
	"fmt"
	"os"
	"strconv"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// KeyReadings are the keys of hrsync's replica that read account a's data (config.KeyScopes:
// serve.keys by name; serve.api_keys, and the key file when it exists, with full access), each
// with the classes it reads of each collection (server.Readable). A key file not made yet (serve
// never ran) is no key. Keys are named, never given.
func KeyReadings(cfg config.Settings, a *config.Account) ([]KeyReading, error) {
	var out []KeyReading
	for _, k := range config.KeyScopes(cfg) {
		if k.Account != a.Name {
			continue
		}
		name := "the application using hrsync's API key " + strconv.Quote(k.Name)
		switch k.Name {
		case "serve.api_keys":
			name = "the applications using hrsync's API keys of serve.api_keys (full access)"
		case cfg.Serve.APIKeyFile:
			if _, err := os.Stat(k.Name); err != nil {
				continue
			}
			name = "the applications using hrsync's API key of its key file (full access)"
		}
		readings, err := server.Readable(k.Scope, a.Declarations)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.Name, err)
		}
		kr := KeyReading{Name: name, Reads: map[string][]v1.Class{}}
		for collection, r := range readings {
			kr.Reads[collection] = r.Classes()
		}
		out = append(out, kr)
	}
	return out, nil
}
