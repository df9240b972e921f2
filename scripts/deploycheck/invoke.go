package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// invocation is one way the kit starts hrsync: its arguments (after the binary), its
// environment, and the files it reads (by the path the deployment gives them).
type invocation struct {
	Where string            `json:"where"`
	Args  []string          `json:"args"`
	Env   map[string]string `json:"env"`
	Files map[string]string `json:"files"`
	// Ports the deployment expects hrsync to listen on: "metrics" (metrics.addr) and "serve"
	// (serve.addr), when it probes, publishes or scrapes them.
	Ports map[string]int `json:"ports"`
}

// subcommands are hrsync's commands (cmd/hrsync/run.go).
var subcommands = []string{"migrate", "serve", "sync", "onboard", "run", "demo", "version"}

// The worker's stop: up to stopTimeout for a sync to roll back, then up to shutdownTimeout for
// its servers to drain (cmd/hrsync/runcmd.go and serve.go).
const (
	stopTimeout     = 30 * time.Second
	shutdownTimeout = 15 * time.Second
)

// config is hrsync's configuration as flat key paths (source.api_key) with string values;
// lists are comma-joined, as the environment gives them.
type config map[string]string

// loadDefaults reads the repository's config.yaml, which documents every key with its default.
func loadDefaults(path string) (config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := flatten(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func flatten(data []byte) (config, error) {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	c := config{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
		case []any:
			var items []string
			for _, x := range v {
				items = append(items, fmt.Sprint(x))
			}
			c[prefix] = strings.Join(items, ",")
		case nil:
			c[prefix] = ""
		default:
			c[prefix] = fmt.Sprint(v)
		}
	}
	walk("", m)
	return c, nil
}

// envName is the variable that overrides a key: HRSYNC_ + the path in upper case joined by _.
func envName(key string) string {
	return "HRSYNC_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// knownEnv maps every HRSYNC_* variable hrsync reads to its key.
func knownEnv(defaults config) map[string]string {
	m := map[string]string{}
	for k := range defaults {
		m[envName(k)] = k
	}
	return m
}

func invocationsCmd(args []string, p *problems) error {
	fs := newFlags("invocations")
	bin, defaultsPath := hrsyncFlags(fs, "the command lines and configurations")
	_ = fs.Parse(args)
	defaults, err := loadDefaults(*defaultsPath)
	if err != nil {
		return err
	}
	var invs []invocation
	dec := json.NewDecoder(os.Stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&invs); err != nil {
		return fmt.Errorf("invocations on stdin: %w", err)
	}
	if len(invs) == 0 {
		p.addf("no invocations given")
	}
	for _, inv := range invs {
		checkInvocation(inv, defaults, *bin, p)
	}
	return nil
}

// checkInvocation checks one command line against hrsync: known command, variables and
// configuration keys; what the command needs is configured; the listen addresses match the
// ports the deployment uses; and, with bin, hrsync itself accepts the flags (cmd -h) and loads
// the configuration (version, which loads and validates it like every command).
func checkInvocation(inv invocation, defaults config, bin string, p *problems) {
	where := inv.Where
	before := len(p.list)
	known := knownEnv(defaults)
	for name := range inv.Env {
		if strings.HasPrefix(name, "HRSYNC_") {
			if _, ok := known[name]; !ok {
				p.addf("%s: %s is not a variable hrsync reads (config.yaml has no such key)", where, name)
			}
		}
	}

	// Split the arguments: global flags, the command, the command's arguments.
	var global, rest []string
	cmd := ""
	var configPath string
	for i := 0; i < len(inv.Args); i++ {
		a := inv.Args[i]
		if strings.HasPrefix(a, "-") {
			global = append(global, a)
			if isConfigFlag(a) && !strings.Contains(a, "=") && i+1 < len(inv.Args) {
				i++
				global = append(global, inv.Args[i])
			}
			continue
		}
		cmd, rest = a, inv.Args[i+1:]
		break
	}
	if !slices.Contains(subcommands, cmd) {
		p.addf("%s: %q is not an hrsync command (%s)", where, cmd, strings.Join(subcommands, ", "))
		return
	}

	// Read the configuration the way hrsync does: defaults, the file, then the environment.
	tmp, err := os.MkdirTemp("", "deploycheck-")
	if err != nil {
		p.addf("%s: %v", where, err)
		return
	}
	defer os.RemoveAll(tmp)
	rewrite := func(args []string) []string {
		out := slices.Clone(args)
		for i := 0; i < len(out); i++ {
			a := out[i]
			if !isConfigFlag(a) {
				continue
			}
			path := ""
			if name, v, ok := strings.Cut(a, "="); ok {
				path = v
				out[i] = name + "=" + filepath.Join(tmp, "config.yaml")
			} else if i+1 < len(out) {
				i++
				path = out[i]
				out[i] = filepath.Join(tmp, "config.yaml")
			}
			configPath = path
		}
		return out
	}
	global, rest = rewrite(global), rewrite(rest)
	eff := config{}
	for k, v := range defaults {
		eff[k] = v
	}
	if configPath != "" {
		content, ok := inv.Files[configPath]
		if !ok {
			p.addf("%s: --config %s: the deployment does not provide that file", where, configPath)
			return
		}
		fileCfg, err := flatten([]byte(content))
		if err != nil {
			p.addf("%s: %s: %v", where, configPath, err)
			return
		}
		for k, v := range fileCfg {
			if _, ok := defaults[k]; !ok {
				p.addf("%s: %s: %s is not a configuration key", where, configPath, k)
			}
			eff[k] = v
		}
		if err := os.WriteFile(filepath.Join(tmp, "config.yaml"), []byte(content), 0o600); err != nil {
			p.addf("%s: %v", where, err)
			return
		}
	}
	for name, v := range inv.Env {
		if k, ok := known[name]; ok {
			eff[k] = v
		}
	}

	// What the command needs.
	need := func(key, why string) {
		if strings.TrimSpace(eff[key]) == "" {
			p.addf("%s: %s: %s (%s) is not set", where, why, key, envName(key))
		}
	}
	if cmd == "run" || cmd == "sync" || cmd == "onboard" {
		need("source.url", "hrsync "+cmd+" reads the source")
		need("source.api_key", "hrsync "+cmd+" reads the source")
	}
	if cmd == "run" {
		need("schedule", "hrsync run syncs on the schedule")
		if n := inv.Ports["metrics"]; n != 0 {
			checkPort(where, "metrics.addr", eff["metrics.addr"], n, p)
		}
		if slices.Contains(rest, "--serve") || slices.Contains(rest, "-serve") {
			checkServe(where, eff, inv, p)
		}
	}
	if cmd == "serve" {
		checkServe(where, eff, inv, p)
		if n := inv.Ports["metrics"]; n != 0 {
			checkPort(where, "metrics.addr", eff["metrics.addr"], n, p)
		}
	}
	if cmd != "version" && cmd != "demo" && strings.TrimSpace(eff["warehouse.url"]) == "" {
		p.addf("%s: warehouse.url (HRSYNC_WAREHOUSE_URL) is empty", where)
	}

	if bin == "" {
		return
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + tmp}
	for k, v := range inv.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	runHrsync := func(what string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, bin, args...)
		c.Env, c.Dir = env, tmp
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			var ee *exec.ExitError
			msg := err.Error()
			if errors.As(err, &ee) {
				msg = fmt.Sprintf("exit status %d", ee.ExitCode())
			}
			p.addf("%s: %s: hrsync %s: %s: %s", where, what, strings.Join(args, " "), msg, lastLine(out.String()))
		}
	}
	// Flags: a command line hrsync cannot parse exits 2; -h after valid flags exits 0.
	helpArgs := append(slices.Clone(global), cmd)
	if cmd == "onboard" { // positional files follow its flags
		helpArgs = append(helpArgs, "-h")
	} else {
		helpArgs = append(append(helpArgs, rest...), "-h")
	}
	runHrsync("flags", helpArgs...)
	// Configuration: every command loads and validates it before it starts.
	versionArgs := append(slices.Clone(global), "version")
	for i, a := range rest {
		if isConfigFlag(a) {
			versionArgs = append(versionArgs, a)
			if !strings.Contains(a, "=") && i+1 < len(rest) {
				versionArgs = append(versionArgs, rest[i+1])
			}
		}
	}
	runHrsync("configuration", versionArgs...)
	if len(p.list) == before {
		fmt.Fprintf(out, "ok: %s: hrsync %s: flags and configuration accepted by hrsync\n", where, strings.Join(inv.Args, " "))
	}
}

func isConfigFlag(a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name == "config" && strings.HasPrefix(a, "-")
}

func checkServe(where string, eff config, inv invocation, p *problems) {
	if strings.TrimSpace(eff["serve.api_keys"]) == "" && strings.TrimSpace(eff["serve.api_key_file"]) == "" {
		p.addf("%s: serve has no keys: set serve.api_keys (HRSYNC_SERVE_API_KEYS) or serve.api_key_file", where)
	}
	if n := inv.Ports["serve"]; n != 0 {
		addr := eff["serve.addr"]
		for i, a := range inv.Args {
			if (a == "--addr" || a == "-addr") && i+1 < len(inv.Args) {
				addr = inv.Args[i+1]
			} else if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "addr="); ok {
				addr = v
			}
		}
		checkPort(where, "serve.addr", addr, n, p)
	}
}

// checkPort checks that a listen address uses the port the deployment expects.
func checkPort(where, key, addr string, want int, p *problems) {
	if addr == "" {
		p.addf("%s: the deployment uses port %d but %s is empty (nothing listens)", where, want, key)
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.addf("%s: %s %q: %v", where, key, addr, err)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n != want {
		p.addf("%s: %s is %q but the deployment uses port %d", where, key, addr, want)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
