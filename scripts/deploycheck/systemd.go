package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The unit's generic checks are systemd-analyze's (verify, security: deploy/check.sh). What
// stays here is hrsync's: ExecStart runs the installed hrsync with a command and flags hrsync
// takes, the example env file sets only variables hrsync reads and what the command needs, and
// TimeoutStopSec leaves hrsync run the time it takes to stop.

// installedBinary is where the unit expects hrsync (README's install step).
const installedBinary = "/usr/local/bin/hrsync"

func systemdCmd(args []string, p *problems) error {
	fs := newFlags("systemd")
	bin, defaultsPath := hrsyncFlags(fs, "the unit's command line and environment")
	envFile := fs.String("env-file", "", "the example of the unit's EnvironmentFile")
	unit := oneArg(fs, args)
	defaults, err := loadDefaults(*defaultsPath)
	if err != nil {
		return err
	}
	return checkUnit(unit, *envFile, defaults, *bin, p)
}

func checkUnit(unitPath, envPath string, defaults config, bin string, p *problems) error {
	unit, err := readUnit(unitPath)
	if err != nil {
		return err
	}
	name := filepath.Base(unitPath)
	exec := strings.Fields(unit["ExecStart"])
	if len(exec) == 0 || exec[0] != installedBinary {
		p.addf("%s: ExecStart=%s: want %s and its arguments", name, unit["ExecStart"], installedBinary)
		return nil
	}
	if unit["EnvironmentFile"] == "" {
		p.addf("%s: no EnvironmentFile: hrsync's key and warehouse URL come from one", name)
	}
	env, err := readEnvFile(envPath)
	if err != nil {
		return err
	}
	for _, a := range exec[1:] {
		if a == "run" {
			need := stopTimeout + shutdownTimeout
			if d, err := systemdDuration(unit["TimeoutStopSec"]); err != nil || d < need {
				p.addf("%s: TimeoutStopSec=%s: want at least %s (hrsync run stops in up to %s + %s)", name, unit["TimeoutStopSec"], need, stopTimeout, shutdownTimeout)
			}
		}
	}
	checkInvocation(invocation{Where: name + " with " + filepath.Base(envPath), Args: exec[1:], Env: env}, defaults, bin, p)
	return nil
}

// readUnit reads a unit file's Key=Value settings; the last one of a key wins (the unit gives
// each key hrsync needs once).
func readUnit(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m, sc.Err()
}

// readEnvFile reads KEY=VALUE lines, as systemd's EnvironmentFile= does for unquoted values.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not KEY=VALUE", path, line)
		}
		env[k] = v
	}
	return env, nil
}

// systemdDuration parses the time spans the unit uses: a number of seconds, or Go-style units
// with systemd's "min".
func systemdDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "min", "m"))
}
