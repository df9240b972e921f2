#!/usr/bin/env bash
# Checks the release configuration and builds a snapshot release into dist/, as a tag's release
# would but publishing nothing: make release-check (docs/development.md#releasing).
#
# Installs the pinned goreleaser and cyclonedx-gomod (the SBOMs) into GOBIN when missing or
# another version, runs goreleaser check, then goreleaser release --snapshot, then checks what it
# made: six archives with their SBOMs and checksums, and a binary that knows its version.
# Works offline once the Go module cache holds the modules (the first install downloads them).
set -euo pipefail

# goreleaser v2.15.1 is the newest the module proxy serves that builds with Go 1.26.
GORELEASER_VERSION=v2.15.1
CYCLONEDX_GOMOD_VERSION=v1.10.0

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null 2>&1 || {
	echo "FAIL: go not found on PATH or in /usr/local/go/bin" >&2
	exit 1
}
gopath=$(go env GOPATH)
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin="${gopath%%:*}/bin"
export PATH="$gobin:$PATH"

# install MODULE/CMD VERSION: go install it into GOBIN unless the binary there is that version
# (go version -m reads the module version the binary was built from).
install() {
	local pkg=$1 version=$2 bin
	bin="$gobin/$(basename "$pkg")"
	if [[ -x $bin ]] && [[ $(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $3; exit }') == "$version" ]]; then
		return 0
	fi
	echo "Installing $pkg@$version into $gobin (goreleaser takes minutes to build)"
	GOBIN="$gobin" go install "$pkg@$version"
}
install github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION"
install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION"

# goreleaser reads the commit only from a checkout with a remote; without one (a local clone, a
# worktree of one) a snapshot says "none". The project's URL, for this process only:
if [[ -z $(git remote) ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/hrsync/hrsync.git
fi

started=$SECONDS
goreleaser check
# --skip=docker: the images need a Docker engine with buildx (and pull their base images), which
# this check must not; a tag's release builds them. publish and sign: a snapshot is never either.
goreleaser release --snapshot --clean --skip=publish,docker,sign

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
shopt -s nullglob
archives=(dist/hrsync_*.tar.gz dist/hrsync_*.zip)
((${#archives[@]} == 6)) || fail "want 6 archives (linux, darwin, windows × amd64, arm64), dist/ has ${#archives[@]}: ${archives[*]}"
for a in "${archives[@]}"; do
	sbom=${a%.zip}
	sbom=${sbom%.tar.gz}.cdx.json
	grep -qF '"bomFormat": "CycloneDX"' "$sbom" 2>/dev/null || fail "$a has no SBOM ($sbom)"
	grep -qF "  $(basename "$a")" dist/checksums.txt || fail "$a is not in dist/checksums.txt"
done
bins=(dist/hrsync_"$(go env GOOS)_$(go env GOARCH)"*/hrsync)
((${#bins[@]} == 1)) || fail "no binary for this machine ($(go env GOOS)/$(go env GOARCH)) in dist/"
"${bins[0]}" version
first=$("${bins[0]}" version | head -n 1)
[[ $first == "hrsync v"* && $first != "hrsync dev" ]] || fail "${bins[0]} version says '$first': the -X ldflags of .goreleaser.yaml set nothing"
"${bins[0]}" version | grep -q "^commit:   $(git rev-parse HEAD)" || fail "${bins[0]} version does not name the commit $(git rev-parse HEAD)"
# The release is built as the tests' binary is (internal/releasebuild).
settings=$(go version -m "${bins[0]}" | awk '$1 == "build" { print $2 }')
for want in CGO_ENABLED=0 -trimpath=true -tags=timetzdata; do
	grep -qxF -- "$want" <<<"$settings" || fail "${bins[0]} was not built with $want (go version -m): .goreleaser.yaml and internal/releasebuild differ"
done
echo "ok: release check passed in $((SECONDS - started)) s (dist/)"
