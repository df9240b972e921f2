// Package buildinfo says which build of hrsync is running: its version, the commit it was built
// from, when, with which Go, and whether the working tree had changes not committed.
//
// Release builds set them with -ldflags -X (.goreleaser.yaml, deploy/Dockerfile):
//
//	-X github.com/hrsync/hrsync/internal/buildinfo.version=v1.2.3
//	-X github.com/hrsync/hrsync/internal/buildinfo.commit=<full revision>
//	-X github.com/hrsync/hrsync/internal/buildinfo.date=<RFC 3339 time>
//	-X github.com/hrsync/hrsync/internal/buildinfo.modified=true
//
// Otherwise they come from what the Go toolchain stamped into the binary
// (runtime/debug.ReadBuildInfo): the module's version for go install module@v1.2.3, and the
// commit, its time and whether the tree was modified (vcs.revision, vcs.time, vcs.modified) for
// a go build in a git checkout.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Set by release builds with -ldflags -X (see the package comment). -X only sets a string
// variable that no function call initialises: keep them plain, and empty.
var (
	version  string
	commit   string
	date     string
	modified string
)

// Dev is the version of a build that says none: go build with no -X, outside a module version.
const Dev = "dev"

// Info is one build.
type Info struct {
	// Version is v1.2.3, a Go pseudo-version (go build in a checkout of Go 1.24 and later
	// stamps one from the tags), or Dev.
	Version string
	// Commit is the full VCS revision, "" when unknown.
	Commit string
	// Date is when a release was built, or the commit's time for a go build in a checkout;
	// zero when unknown.
	Date time.Time
	// Modified says the working tree had changes not committed.
	Modified bool
	// GoVersion is the Go that built it, e.g. go1.26.8.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// ldflags are the -X variables.
type ldflags struct{ version, commit, date, modified string }

// Get is this process's build.
func Get() Info { return current() }

var current = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return parse(bi, ldflags{version, commit, date, modified}, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
})

// parse reads the build from what the toolchain stamped (bi, nil when the binary has none) and
// the -X variables, which win: a release build says what it is, whatever the checkout it was
// built in. goVersion and platform are the running binary's.
func parse(bi *debug.BuildInfo, ld ldflags, goVersion, platform string) Info {
	i := Info{Version: Dev, GoVersion: goVersion, Platform: platform}
	var vcsTime string
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			i.Version = v
		}
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if ld.version != "" {
		i.Version = ld.version
	}
	if ld.commit != "" {
		// The stamped time and modified flag belong to the stamped commit, not to this one.
		i.Commit, vcsTime, i.Modified = ld.commit, "", false
	}
	if ld.modified != "" {
		i.Modified, _ = strconv.ParseBool(ld.modified)
	}
	when := vcsTime
	if ld.date != "" {
		when = ld.date
	}
	if t, err := time.Parse(time.RFC3339, when); err == nil {
		i.Date = t.UTC()
	} else if unix, err := strconv.ParseInt(when, 10, 64); err == nil && unix > 0 {
		i.Date = time.Unix(unix, 0).UTC() // SOURCE_DATE_EPOCH, $(date +%s)
	}
	return i
}

// ShortCommit is the commit's first 12 characters, "" when unknown.
func (i Info) ShortCommit() string {
	if len(i.Commit) > 12 {
		return i.Commit[:12]
	}
	return i.Commit
}

// Short is the version and the short commit, e.g. "v1.2.3 (abc123def456)": what reports and
// exports name the build by.
func (i Info) Short() string {
	if c := i.ShortCommit(); c != "" {
		return i.Version + " (" + c + ")"
	}
	return i.Version
}

// String is the build on one line, e.g.
// "v1.2.3 (commit abc123def456, built 2026-11-29, go1.26.8 linux/amd64)".
func (i Info) String() string {
	var parts []string
	if c := i.ShortCommit(); c != "" {
		parts = append(parts, "commit "+c)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	if !i.Date.IsZero() {
		parts = append(parts, "built "+i.Date.Format(time.DateOnly))
	}
	parts = append(parts, i.GoVersion+" "+i.Platform)
	return i.Version + " (" + strings.Join(parts, ", ") + ")"
}

// Lines is the build as hrsync version prints it, one field a line after the name and
// version.
func (i Info) Lines(name string) string {
	commit, built := "unknown", "unknown"
	if i.Commit != "" {
		commit = i.Commit
		if i.Modified {
			commit += " (modified)"
		}
	}
	if !i.Date.IsZero() {
		built = i.Date.Format(time.RFC3339)
	}
	return fmt.Sprintf("%s %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n",
		name, i.Version, commit, built, i.GoVersion, i.Platform)
}
