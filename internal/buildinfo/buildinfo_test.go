package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-28T21:14:05Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	committed := time.Date(2026, 11, 28, 21, 14, 5, 0, time.UTC)
	released := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ld   ldflags
		want Info
		line string
	}{
		{
			name: "no build information",
			want: Info{Version: Dev, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "dev (go1.26.8 linux/amd64)",
		},
		{
			name: "go build with -buildvcs=false",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/hrsync/hrsync", Version: "(devel)"}},
			want: Info{Version: Dev, GoVersion: "go1.26.1", Platform: "linux/amd64"},
			line: "dev (go1.26.1 linux/amd64)",
		},
		{
			name: "go install module@version",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hrsync/hrsync", Version: "v1.4.0"}},
			want: Info{Version: "v1.4.0", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "v1.4.0 (go1.26.8 linux/amd64)",
		},
		{
			name: "go build in a clean checkout",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261128211405-0123456789ab"}, Settings: vcs("false")},
			want: Info{Version: "v0.0.0-20261128211405-0123456789ab", Commit: rev, Date: committed, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "v0.0.0-20261128211405-0123456789ab (commit 0123456789ab, built 2026-11-28, go1.26.8 linux/amd64)",
		},
		{
			name: "go build in a modified checkout",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			want: Info{Version: Dev, Commit: rev, Date: committed, Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "dev (commit 0123456789ab, modified, built 2026-11-28, go1.26.8 linux/amd64)",
		},
		{
			name: "a release build: -X wins over the stamped commit, its time and its modified flag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			ld:   ldflags{version: "v1.2.3", commit: "fedcba9876543210fedcba9876543210fedcba98", date: "2026-11-29T06:00:00Z", modified: "false"},
			want: Info{Version: "v1.2.3", Commit: "fedcba9876543210fedcba9876543210fedcba98", Date: released, GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			line: "v1.2.3 (commit fedcba987654, built 2026-11-29, go1.26.8 darwin/arm64)",
		},
		{
			name: "only the version set, as deploy/Dockerfile does",
			ld:   ldflags{version: "v1.2.3-4-gabcdef0-dirty"},
			want: Info{Version: "v1.2.3-4-gabcdef0-dirty", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "v1.2.3-4-gabcdef0-dirty (go1.26.8 linux/amd64)",
		},
		{
			name: "a date in seconds since 1970 (SOURCE_DATE_EPOCH), a modified snapshot",
			ld:   ldflags{version: "v0.0.0-SNAPSHOT-abc1234", commit: "abc1234", date: "1795939200", modified: "true"},
			want: Info{Version: "v0.0.0-SNAPSHOT-abc1234", Commit: "abc1234", Date: time.Unix(1795939200, 0).UTC(), Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "v0.0.0-SNAPSHOT-abc1234 (commit abc1234, modified, built 2026-11-29, go1.26.8 linux/amd64)",
		},
		{
			name: "a date it cannot read is left out",
			ld:   ldflags{version: "v1.2.3", date: "yesterday"},
			want: Info{Version: "v1.2.3", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			line: "v1.2.3 (go1.26.8 linux/amd64)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			platform := tt.want.Platform
			got := parse(tt.bi, tt.ld, "go1.26.8", platform)
			if got != tt.want {
				t.Errorf("parse:\n got %+v\nwant %+v", got, tt.want)
			}
			if s := got.String(); s != tt.line {
				t.Errorf("String:\n got %s\nwant %s", s, tt.line)
			}
		})
	}
}

func TestLines(t *testing.T) {
	i := Info{Version: "v1.2.3", Commit: "fedcba9876543210fedcba9876543210fedcba98", Modified: true,
		Date: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC), GoVersion: "go1.26.8", Platform: "linux/amd64"}
	want := `hrsync v1.2.3
commit:   fedcba9876543210fedcba9876543210fedcba98 (modified)
built:    2026-11-29T06:00:00Z
go:       go1.26.8
platform: linux/amd64
`
	if got := i.Lines("hrsync"); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if got := (Info{Version: Dev, GoVersion: "go1.26.8", Platform: "linux/amd64"}).Lines("hrsync"); !strings.Contains(got, "commit:   unknown\nbuilt:    unknown\n") {
		t.Errorf("an unknown commit and date are not said so:\n%s", got)
	}
	if got := i.Short(); got != "v1.2.3 (fedcba987654)" {
		t.Errorf("Short: %s", got)
	}
}

// TestGetIsThisBinary checks Get against the test binary itself: the Go that built it, and a
// version that is never empty.
func TestGetIsThisBinary(t *testing.T) {
	i := Get()
	if i.Version == "" || !strings.HasPrefix(i.GoVersion, "go") || !strings.Contains(i.Platform, "/") {
		t.Errorf("Get() = %+v", i)
	}
}
