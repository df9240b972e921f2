// Package account wires one account of the configuration to what it runs on: its warehouse,
// opened once for a command (Open, OpenWritable, OpenExisting), per run for the worker (a run's
// warehouse and client are open only while one of its jobs runs), or lazily for the replica (at
// most serve.open_accounts at once); its source client and shared request budget; and the
// commands that run accounts side by side: hrsync run's fleet of workers with their readiness
// probes and replica (Run), hrsync serve (Serve), a sync (OpenSync) and an onboarding
// (Onboard). Package main keeps the commands themselves: their flags, output and exit statuses.
package account
