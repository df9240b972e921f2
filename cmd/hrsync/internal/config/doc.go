// Package config is hrsync's configuration: the config file (config.yaml) and its HRSYNC_*
// variables read over the defaults, unknown keys and variables refused with the closest valid
// name, every value checked and parsed once into Settings, and the rules of several accounts
// (what an account inherits from the top-level sections, its own SQLite file, its own
// variables). Commands read Settings; none parses a string of the configuration again.
//
// The defaults are the packages' own (sink.DefaultStatementTimeout, walk.DefaultConcurrency,
// serve.DefaultIdempotencyTTL…) wherever a package has one, so that each is written once.
package config
