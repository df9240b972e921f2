// Command deploycheck validates hrsync's deployment kit (deploy/) offline, for deploy/check.sh:
//
//	deploycheck kube [-hrsync BIN] -defaults config.yaml DIR
//	    every Kubernetes object in DIR decoded strictly into the API types, cross-references
//	    resolved, pods held to the restricted Pod Security Standard, the kustomization's list
//	    checked, and each hrsync container's command line and configuration run through hrsync
//	deploycheck compose [-hrsync BIN] -defaults config.yaml -env-file .env.example [-prometheus FILE] FILE
//	    the compose file loaded as Docker Compose v2 loads it (compose-go), the kit's promises
//	    (dependencies, replicas, secrets from the env file), and each hrsync service's command
//	    line and environment run through hrsync
//	deploycheck invocations [-hrsync BIN] -defaults config.yaml < JSON
//	    the same hrsync checks for command lines gathered elsewhere (compose, systemd)
//	deploycheck dockerfile -root DIR [-file deploy/Dockerfile] [-export DIR] [-script FILE]
//	    BuildKit's parser and the rules of `docker build --check` (base images are not
//	    fetched: a stub stands in for their configuration), structural checks, the build context
//	    .dockerignore leaves (exported to DIR), and the build stage's RUN lines as a script
//	deploycheck grafana [-queries OUT] [-provisioning DIR -compose FILE] DASHBOARD
//	    the dashboard's datasource, account variable and filters, its queries written as rules
//	    for promtool, and the compose stack's Grafana provisioning
//	deploycheck grafana [-sql OUT] [-database URL -schema S -from T -to T] [-provisioning DIR -compose FILE] SQL-DASHBOARD
//	    a Postgres dashboard (hr-dashboard.json): its datasource, ${schema} variable, no names
//	    read; its queries, Grafana's macros replaced, written out and run on a warehouse (psql)
//	deploycheck k8s-sd-as-static IN OUT
//	    IN's kubernetes_sd_configs replaced by a static target, for Debian's promtool
//	deploycheck systemd [-hrsync BIN] -defaults config.yaml -env-file hrsync.env.example UNIT
//	    the unit's ExecStart and TimeoutStopSec, and its command line with the example env file
//	    run through the invocation checks
//	deploycheck static BIN
//	    BIN is a statically linked ELF executable
//
// It is its own module so that its dependencies (k8s.io/api, BuildKit) stay out of hrsync's
// go.mod. Every subcommand prints what it checked and exits 1 after listing every problem.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// out is where the checks say what passed (discarded by the tests).
var out io.Writer = os.Stdout

// problems collects what failed; every check runs, then main reports them all.
type problems struct{ list []string }

func (p *problems) addf(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) any() bool { return len(p.list) > 0 }

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var p problems
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "kube":
		err = kubeCmd(args, &p)
	case "compose":
		err = composeCmd(args, &p)
	case "invocations":
		err = invocationsCmd(args, &p)
	case "dockerfile":
		err = dockerfileCmd(args, &p)
	case "grafana":
		err = grafanaCmd(args, &p)
	case "k8s-sd-as-static":
		err = kubernetesSDAsStatic(args, &p)
	case "systemd":
		err = systemdCmd(args, &p)
	case "static":
		err = staticCmd(args, &p)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploycheck:", err)
		os.Exit(2)
	}
	if p.any() {
		for _, s := range p.list {
			fmt.Fprintln(os.Stderr, "  problem: "+s)
		}
		fmt.Fprintf(os.Stderr, "deploycheck %s: %d problem(s)\n", os.Args[1], len(p.list))
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, strings.TrimSpace(`
usage: deploycheck kube [-hrsync BIN] -defaults config.yaml DIR
       deploycheck compose [-hrsync BIN] -defaults config.yaml -env-file FILE [-prometheus FILE] compose.yaml
       deploycheck invocations [-hrsync BIN] -defaults config.yaml < invocations.json
       deploycheck dockerfile -root DIR [-file deploy/Dockerfile] [-export DIR] [-script FILE]
       deploycheck grafana [-queries OUT] [-provisioning DIR -compose FILE] dashboard.json
       deploycheck grafana [-sql OUT] [-database URL -schema S -from T -to T] [-provisioning DIR -compose FILE] hr-dashboard.json
       deploycheck k8s-sd-as-static prometheus-kubernetes.yml OUT
       deploycheck systemd [-hrsync BIN] -defaults config.yaml -env-file FILE hrsync.service
       deploycheck static BIN`))
	os.Exit(2)
}

// newFlags is a flag set that reports its own errors.
func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("deploycheck "+name, flag.ExitOnError)
}

// hrsyncFlags adds to fs the flags of a check that runs what it checks through hrsync: -hrsync,
// the binary to run what (the files' command lines, say) through, and -defaults, the
// repository's config.yaml.
func hrsyncFlags(fs *flag.FlagSet, what string) (bin, defaultsPath *string) {
	bin = fs.String("hrsync", "", "hrsync binary to run "+what+" through")
	defaultsPath = fs.String("defaults", "config.yaml", "the repository's config.yaml")
	return bin, defaultsPath
}

// oneArg parses args into fs and returns the one argument left, the file or folder to check;
// anything else prints the usage and exits.
func oneArg(fs *flag.FlagSet, args []string) string {
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	return fs.Arg(0)
}
