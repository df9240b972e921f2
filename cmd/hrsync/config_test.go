package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// TestReadmeDocumentsEveryKey keeps the configuration table (docs/configuration.md, where the
// README points) in agreement with the code.
func TestReadmeDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for line := range strings.Lines(string(data)) {
		cells := strings.Split(line, "|")
		if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[2]), "`HRSYNC_") {
			documented = append(documented, strings.Trim(strings.TrimSpace(cells[2]), "`"))
		}
	}
	slices.Sort(documented)
	want := config.EnvNames()
	slices.Sort(want)
	if !slices.Equal(documented, want) {
		t.Errorf("docs/configuration.md's table\n %v\ncode\n %v", documented, want)
	}
}

// parsed is c as config.Load hands it to the commands.
func parsed(t *testing.T, c config.Config) config.Settings {
	t.Helper()
	s, err := c.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
