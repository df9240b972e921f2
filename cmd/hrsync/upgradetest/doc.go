// Package upgradetest holds the rolling-upgrade test: an older commit's hrsync, built from this
// repository's history, against a warehouse this build migrated (docs/operations.md#upgrading).
// It has no code of its own; it is a package of its own so that its one slow build runs apart
// from cmd/hrsync's tests, and `go test -short` skips it.
package upgradetest
