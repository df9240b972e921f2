package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

// composeSecrets are the variables that carry secrets: the compose file must take them from
// the env file (the example's REPLACE-ME placeholders show through), never hold them itself.
var composeSecrets = []string{"POSTGRES_PASSWORD", "HRSYNC_SOURCE_API_KEY", "HRSYNC_SERVE_API_KEYS", "GF_SECURITY_ADMIN_PASSWORD"}

// composeCmd loads the compose file as Docker Compose v2 does (compose-go: the Compose
// Specification's schema, interpolation from the example env file, normalization), then checks
// the kit's promises and runs each hrsync service's command line and environment through
// hrsync.
func composeCmd(args []string, p *problems) error {
	fs := newFlags("compose")
	bin, defaultsPath := hrsyncFlags(fs, "the services' command lines and environment")
	envFile := fs.String("env-file", "", "the env file to interpolate with (the example)")
	promConfig := fs.String("prometheus", "", "the Prometheus configuration the compose file mounts, for the scrape targets")
	file := oneArg(fs, args)
	defaults, err := loadDefaults(*defaultsPath)
	if err != nil {
		return err
	}
	name := filepath.Base(file)
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithName("hrsync"),
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithEnvFiles(*envFile),
		cli.WithDotEnv,
	)
	if err != nil {
		return err
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		p.addf("%s: %v", name, err)
		return nil
	}
	fmt.Fprintf(out, "ok: %s: loaded as Docker Compose v2 loads it (compose-go): %d services, schema and interpolation\n", name, len(project.Services))

	// The example env file: every variable it sets or shows is one something reads.
	checkEnvExample(*envFile, defaults, p)

	// Scrape targets: host:port the Prometheus configuration names per service.
	scrape := map[string]int{}
	if *promConfig != "" {
		scrape = scrapeTargets(*promConfig, p)
	}

	raw, _ := os.ReadFile(file)
	for _, key := range composeSecrets {
		if regexp.MustCompile(`(?m)^\s*` + key + `:\s*[^$\s]`).Match(raw) {
			p.addf("%s: %s is written in the file; take it from the env file (${%s})", name, key, key)
		}
	}
	svc := func(n string) (types.ServiceConfig, bool) {
		s, ok := project.Services[n]
		if !ok {
			p.addf("%s: no service %s", name, n)
		}
		return s, ok
	}
	if pg, ok := svc("postgres"); ok {
		if pg.HealthCheck == nil || len(pg.HealthCheck.Test) == 0 {
			p.addf("%s: postgres has no healthcheck", name)
		}
		if !strings.HasPrefix(pg.Image, "postgres:15") {
			p.addf("%s: postgres image %s: want postgres:15", name, pg.Image)
		}
	}
	needDep := func(s types.ServiceConfig, on, cond string) {
		if d, ok := s.DependsOn[on]; !ok || d.Condition != cond {
			p.addf("%s: %s must depend on %s with condition %s", name, s.Name, on, cond)
		}
	}
	if m, ok := svc("migrate"); ok {
		needDep(m, "postgres", types.ServiceConditionHealthy)
		if m.Restart != "no" && m.Restart != "" {
			p.addf("%s: migrate is one-shot: restart \"no\"", name)
		}
	}
	if w, ok := svc("worker"); ok {
		needDep(w, "migrate", types.ServiceConditionCompletedSuccessfully)
		need := stopTimeout + shutdownTimeout
		if w.StopGracePeriod == nil || time.Duration(*w.StopGracePeriod) < need {
			p.addf("%s: worker stop_grace_period must be at least %s (hrsync run stops in up to %s + %s)", name, need, stopTimeout, shutdownTimeout)
		}
	}
	if s, ok := svc("serve"); ok {
		needDep(s, "migrate", types.ServiceConditionCompletedSuccessfully)
		replicas := 1
		if s.Deploy != nil && s.Deploy.Replicas != nil {
			replicas = *s.Deploy.Replicas
		}
		if replicas < 2 {
			p.addf("%s: serve runs %d replica(s); the kit promises 2", name, replicas)
		}
		for _, port := range s.Ports {
			if port.Published == "" {
				continue
			}
			lo, hi, _ := strings.Cut(port.Published, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if hi != "" {
				b, _ = strconv.Atoi(hi)
			}
			if b-a+1 < replicas {
				p.addf("%s: serve publishes %s for %d replicas: one host port each", name, port.Published, replicas)
			}
		}
	}
	for _, n := range project.ServiceNames() {
		s := project.Services[n]
		for _, key := range composeSecrets {
			if v, ok := s.Environment[key]; ok && (v == nil || !strings.Contains(*v, "REPLACE-ME")) {
				p.addf("%s: %s: %s does not come from the env file", name, n, key)
			}
		}
		if s.Build == nil {
			continue
		}
		// The hrsync services, built from deploy/Dockerfile.
		if s.Build.Dockerfile != "deploy/Dockerfile" {
			p.addf("%s: %s builds %s, not deploy/Dockerfile", name, n, s.Build.Dockerfile)
		}
		if _, err := os.Stat(filepath.Join(s.Build.Context, "go.mod")); err != nil {
			p.addf("%s: %s build context %s is not the repository root", name, n, s.Build.Context)
		}
		if !s.ReadOnly || !slices.Contains(s.CapDrop, "ALL") || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			p.addf("%s: %s: want read_only, cap_drop ALL and no-new-privileges", name, n)
		}
		inv := invocation{Where: name + ": service " + n, Args: s.Command, Env: map[string]string{}, Ports: map[string]int{}}
		for k, v := range s.Environment {
			if v != nil {
				inv.Env[k] = *v
			}
		}
		if port, ok := scrape[n]; ok {
			inv.Ports["metrics"] = port
		}
		for _, port := range s.Ports {
			if n == "serve" {
				inv.Ports["serve"] = int(port.Target)
			}
		}
		if len(inv.Args) == 0 {
			inv.Args = []string{"run"} // the image's CMD
		}
		checkInvocation(inv, defaults, *bin, p)
	}
	return nil
}

// checkEnvExample checks the names in the example env file, set or shown commented out.
func checkEnvExample(path string, defaults config, p *problems) {
	data, err := os.ReadFile(path)
	if err != nil {
		p.addf("%v", err)
		return
	}
	known := knownEnv(defaults)
	for _, m := range regexp.MustCompile(`(?m)^#?\s*([A-Z][A-Z0-9_]*)=`).FindAllSubmatch(data, -1) {
		k := string(m[1])
		if _, ok := known[k]; strings.HasPrefix(k, "HRSYNC_") && !ok {
			p.addf("%s: %s is not a variable hrsync reads", filepath.Base(path), k)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && !strings.HasPrefix(k, "#") && slices.Contains(composeSecrets, k) && !strings.Contains(v, "REPLACE-ME") {
			p.addf("%s: %s must be a REPLACE-ME placeholder", filepath.Base(path), k)
		}
	}
}

// scrapeTargets maps service names to the port Prometheus scrapes them on.
func scrapeTargets(path string, p *problems) map[string]int {
	var cfg struct {
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
			DNSSDConfigs []struct {
				Names []string `json:"names"`
				Port  int      `json:"port"`
			} `json:"dns_sd_configs"`
		} `json:"scrape_configs"`
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = yaml.Unmarshal(data, &cfg)
	}
	if err != nil {
		p.addf("%s: %v", path, err)
		return nil
	}
	m := map[string]int{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, t := range st.Targets {
				host, port, _ := strings.Cut(t, ":")
				m[host], _ = strconv.Atoi(port)
			}
		}
		for _, d := range sc.DNSSDConfigs {
			for _, n := range d.Names {
				m[n] = d.Port
			}
		}
	}
	return m
}
