package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	dfparser "github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	digest "github.com/opencontainers/go-digest"
)

func dockerfileCmd(args []string, p *problems) error {
	fs := newFlags("dockerfile")
	root := fs.String("root", ".", "the repository root: the build context")
	file := fs.String("file", "deploy/Dockerfile", "the Dockerfile, relative to -root")
	export := fs.String("export", "", "copy the build context that .dockerignore leaves into this directory")
	script := fs.String("script", "", "write the build stage's RUN lines to this file, as a bash script run in the exported context")
	defaultsPath := fs.String("defaults", "", "the repository's config.yaml, to check HRSYNC_* variables the image sets")
	_ = fs.Parse(args)
	dt, err := os.ReadFile(filepath.Join(*root, *file))
	if err != nil {
		return err
	}
	lintDockerfile(*file, dt, p)

	res, err := dfparser.Parse(bytes.NewReader(dt))
	if err != nil {
		p.addf("%s: %v", *file, err)
		return nil
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		p.addf("%s: %v", *file, err)
		return nil
	}
	var defaults config
	if *defaultsPath != "" {
		if defaults, err = loadDefaults(*defaultsPath); err != nil {
			return err
		}
	}
	checkStages(*root, *file, stages, metaArgs, defaults, p)

	ctxFiles, err := buildContext(*root)
	if err != nil {
		return err
	}
	checkContext(*file, stages, ctxFiles, p)
	if *export != "" {
		if err := exportContext(*root, *export, ctxFiles); err != nil {
			return err
		}
	}
	if *script != "" {
		if err := writeBuildScript(*file, stages[0], *script); err != nil {
			return err
		}
	}
	return nil
}

// stubResolver stands in for the registry: base images are not fetched here, so every base
// image gets an empty linux configuration. Rules that need a base image's real configuration
// (its ENV for UndefinedVar, its platforms for InvalidBaseImagePlatform) see that stub.
type stubResolver struct{}

func (stubResolver) ResolveImageConfig(ctx context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg, _ := json.Marshal(map[string]any{"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}})
	return ref, digest.FromBytes(cfg), cfg, nil
}

// lintDockerfile runs BuildKit's Dockerfile checks, the rules of `docker build --check`.
func lintDockerfile(name string, dt []byte, p *problems) {
	sm := llb.NewSourceMap(nil, name, "Dockerfile", dt)
	sm.Definition = &llb.Definition{}
	res, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{MetaResolver: stubResolver{}, SourceMap: sm})
	if err != nil {
		p.addf("%s: lint: %v", name, err)
		return
	}
	if res.Error != nil {
		p.addf("%s: %s", name, res.Error.Message)
	}
	for _, w := range res.Warnings {
		line := ""
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			line = fmt.Sprintf(":%d", w.Location.Ranges[0].Start.Line)
		}
		p.addf("%s%s: %s: %s (%s)", name, line, w.RuleName, w.Detail, w.URL)
	}
	if res.Error == nil && len(res.Warnings) == 0 {
		fmt.Fprintf(out, "ok: %s: BuildKit's parser and `docker build --check` rules: no warnings\n", name)
	}
}

// checkStages checks what the kit promises about the image: a Go build stage matching go.mod,
// a static, versioned binary, and a minimal non-root final stage running hrsync.
func checkStages(root, name string, stages []instructions.Stage, metaArgs []instructions.ArgCommand, defaults config, p *problems) {
	if len(stages) < 2 {
		p.addf("%s: want a build stage and a final stage, have %d stage(s)", name, len(stages))
		return
	}
	args := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				args[kv.Key] = *kv.Value
			}
		}
	}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return args[k] }) }

	base, goVersion := checkBuildStage(root, name, stages[0], expand, p)
	fbase, user := checkFinalStage(name, stages[len(stages)-1], expand, defaults, p)
	if !p.any() {
		fmt.Fprintf(out, "ok: %s: %s build (go %s, CGO_ENABLED=0, -X buildinfo.version) into %s as %s, ENTRYPOINT hrsync, CMD run\n",
			name, base, goVersion, fbase, user)
	}
}

// versionVar is the variable hrsync version prints, which the go build line sets with -X.
const versionVar = "github.com/hrsync/hrsync/internal/buildinfo.version"

// checkBuildStage: golang of go.mod's version, and a go build of ./cmd/hrsync that is static,
// trimmed and sets versionVar, which package buildinfo declares.
func checkBuildStage(root, name string, build instructions.Stage, expand func(string) string, p *problems) (base, goVersion string) {
	base = expand(build.BaseName)
	goVersion, err := goDirective(filepath.Join(root, "go.mod"))
	if err != nil {
		p.addf("%v", err)
	}
	if tag, ok := strings.CutPrefix(base, "golang:"); !ok {
		p.addf("%s: the build stage is %s, not golang", name, base)
	} else if mm := majorMinor(goVersion); !strings.HasPrefix(tag, mm+"-") && tag != mm && !strings.HasPrefix(tag, mm+".") {
		p.addf("%s: the build stage is %s but go.mod says go %s", name, base, goVersion)
	}
	var buildCmd string
	for _, c := range build.Commands {
		if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), "go build") {
			buildCmd = strings.Join(r.CmdLine, " ")
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w", "-X " + versionVar + "=", "./cmd/hrsync"} {
		if !strings.Contains(buildCmd, want) {
			p.addf("%s: the go build line lacks %q", name, want)
		}
	}
	if err := hasVersionVar(filepath.Join(root, "internal", "buildinfo"), "buildinfo"); err != nil {
		p.addf("%s: -X %s: %v", name, versionVar, err)
	}
	return base, goVersion
}

// checkFinalStage: distroless static (or scratch), a non-root user owning a 0700 state
// directory as the working directory, ENTRYPOINT hrsync with CMD run, hrsync's ports exposed,
// and only HRSYNC_* variables hrsync reads.
func checkFinalStage(name string, final instructions.Stage, expand func(string) string, defaults config, p *problems) (fbase, user string) {
	fbase = expand(final.BaseName)
	switch {
	case fbase == "scratch":
	case !strings.HasPrefix(fbase, "gcr.io/distroless/static"):
		p.addf("%s: final stage %s: want distroless static or scratch", name, fbase)
	case strings.HasSuffix(fbase, ":latest") || !strings.Contains(path.Base(fbase), ":") && !strings.Contains(fbase, "@sha256:"):
		p.addf("%s: final stage %s: pin a tag or digest", name, fbase)
	}
	var workdir string
	var entrypoint, cmd *instructions.ShellDependantCmdLine
	var stateCopy *instructions.CopyCommand // what makes the state directory
	exposed := map[int]bool{}
	env := map[string]string{}
	for _, c := range final.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.WorkdirCommand:
			workdir = c.Path
		case *instructions.EntrypointCommand:
			entrypoint = &c.ShellDependantCmdLine
		case *instructions.CmdCommand:
			cmd = &c.ShellDependantCmdLine
		case *instructions.ExposeCommand:
			for _, port := range c.Ports {
				n, _ := strconv.Atoi(strings.TrimSuffix(port, "/tcp"))
				exposed[n] = true
			}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				env[kv.Key] = kv.Value
			}
		case *instructions.CopyCommand:
			if path.Clean(c.DestPath) == "/var/lib/hrsync" {
				stateCopy = c
			}
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); (err != nil && uid != "nonroot") || (err == nil && n == 0) {
		p.addf("%s: final stage USER %q: want a non-root user (65532)", name, user)
	}
	if workdir != "/var/lib/hrsync" {
		p.addf("%s: final stage WORKDIR %q: want /var/lib/hrsync", name, workdir)
	}
	// The state directory holds the SQLite warehouse, personal data: the runtime user's alone.
	if stateCopy == nil {
		p.addf("%s: final stage: no COPY makes /var/lib/hrsync (want --chown=65532:65532 --chmod=0700)", name)
	} else if own, _, _ := strings.Cut(stateCopy.Chown, ":"); own != uid || strings.TrimLeft(stateCopy.Chmod, "0") != "700" {
		p.addf("%s: final stage: COPY to /var/lib/hrsync has --chown=%q --chmod=%q, want the runtime user (%s) and 0700", name, stateCopy.Chown, stateCopy.Chmod, uid)
	}
	if entrypoint == nil || entrypoint.PrependShell || len(entrypoint.CmdLine) != 1 || path.Base(entrypoint.CmdLine[0]) != "hrsync" {
		p.addf("%s: want ENTRYPOINT [\"hrsync\"] in exec form", name)
	}
	if cmd == nil || cmd.PrependShell || !slices.Equal(cmd.CmdLine, []string{"run"}) {
		p.addf("%s: want CMD [\"run\"] in exec form", name)
	}
	for _, port := range []int{8080, 9090} {
		if !exposed[port] {
			p.addf("%s: EXPOSE %d missing", name, port)
		}
	}
	known := knownEnv(defaults)
	for k, v := range env {
		if !strings.HasPrefix(k, "HRSYNC_") || defaults == nil {
			continue
		}
		if _, ok := known[k]; !ok {
			p.addf("%s: ENV %s is not a variable hrsync reads", name, k)
		}
		if k == "HRSYNC_METRICS_ADDR" {
			_, port, _ := strings.Cut(v, ":")
			if n, _ := strconv.Atoi(port); !exposed[n] {
				p.addf("%s: ENV %s=%s but that port is not exposed", name, k, v)
			}
		}
	}
	return fbase, user
}

func goDirective(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)\s*$`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no go directive", gomod)
	}
	return string(m[1]), nil
}

func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// hasVersionVar checks that package pkg in dir declares a package-level string variable
// version, which -ldflags "-X <pkg path>.version=…" sets (it silently does nothing otherwise).
func hasVersionVar(dir, pkg string) error {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if af.Name.Name != pkg {
			continue
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != "version" {
						continue
					}
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
						return nil
					}
					if vs.Type == nil && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							return nil
						}
					}
					return fmt.Errorf("%s: version is not a string variable", f)
				}
			}
		}
	}
	return fmt.Errorf("package %s in %s declares no variable version", pkg, dir)
}

// buildContext lists the files (slash-separated, relative to root) that the build context
// holds after .dockerignore, with Docker's own pattern matcher.
func buildContext(root string) ([]string, error) {
	var patterns []string
	if f, err := os.Open(filepath.Join(root, ".dockerignore")); err == nil {
		patterns, err = ignorefile.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf(".dockerignore: %w", err)
		}
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %w", err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		excluded, err := pm.MatchesOrParentMatches(rel)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if excluded && !pm.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		if !excluded && d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// checkContext checks that the context holds what the build stage copies and none of what
// must never be sent to a builder (keys, databases, env files).
func checkContext(name string, stages []instructions.Stage, files []string, p *problems) {
	secret := regexp.MustCompile(`(^|/)(\.env(\..*)?|.*\.key|.*\.pem|.*\.db|.*\.db-wal|id_[a-z0-9]+)$`)
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
		if secret.MatchString(f) && !strings.HasSuffix(f, ".example") {
			p.addf(".dockerignore: %s would be sent to the builder", f)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd/hrsync/main.go"} {
		if !has[need] {
			p.addf(".dockerignore: %s is not in the build context", need)
		}
	}
	for _, st := range stages {
		for _, c := range st.Commands {
			cp, ok := c.(*instructions.CopyCommand)
			if !ok || cp.From != "" {
				continue
			}
			for _, src := range cp.SourcePaths {
				src = strings.TrimPrefix(path.Clean(src), "/")
				if src == "." {
					continue
				}
				found := has[src]
				for _, f := range files {
					found = found || strings.HasPrefix(f, src+"/")
				}
				if !found {
					p.addf("%s: COPY %s: not in the build context (.dockerignore)", name, src)
				}
			}
		}
	}
	fmt.Fprintf(out, "ok: build context after .dockerignore: %d files\n", len(files))
}

func exportContext(root, dest string, files []string) error {
	for _, f := range files {
		src, dst := filepath.Join(root, filepath.FromSlash(f)), filepath.Join(dest, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		out, err := os.Create(dst)
		if err != nil {
			in.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeBuildScript writes the build stage's RUN lines as a bash script, /out/ (the stage's
// output) becoming $OUT/, so that check.sh can run them in the exported context.
func writeBuildScript(name string, build instructions.Stage, dest string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\n# The RUN lines of the build stage of %s (generated by scripts/deploycheck).\nset -euo pipefail\n", name)
	n := 0
	for _, c := range build.Commands {
		r, ok := c.(*instructions.RunCommand)
		if !ok {
			continue
		}
		if !r.PrependShell || len(r.Files) > 0 {
			return fmt.Errorf("%s: RUN in exec form or with heredocs: not scriptable", name)
		}
		line := strings.Join(r.CmdLine, " ")
		b.WriteString(strings.ReplaceAll(line, "/out/", "${OUT:?}/") + "\n")
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: the build stage has no RUN", name)
	}
	return os.WriteFile(dest, []byte(b.String()), 0o755)
}

// staticCmd checks that a binary is a statically linked ELF executable: no interpreter, no
// shared libraries; it runs on distroless static or scratch.
func staticCmd(args []string, p *problems) error {
	if len(args) != 1 {
		usage()
	}
	f, err := elf.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			p.addf("%s: has a program interpreter: dynamically linked", args[0])
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	if len(libs) > 0 {
		p.addf("%s: needs shared libraries %v", args[0], libs)
	}
	if !p.any() {
		fmt.Fprintf(out, "ok: %s is statically linked (no interpreter, no shared libraries)\n", args[0])
	}
	return nil
}
