// Package onboard creates new hires in the source from CSV files, each row exactly once: it
// reads the files as spreadsheets write them (ReadHires), plans and sends the creates against a
// ledger in the warehouse, writes a report per file, and moves the files of a drop folder to
// processed/ or failed/. A pass of the folder (Pass) is the onboard command's, once, and the
// worker's job (Job), run by the sync package's job runner every poll interval, which also
// retries the files in failed/ with backoff (FailedRetries).
//
// Where each concern lives:
//
//   - onboard.go: the engine: what it needs of the source (Upstream) and the warehouse
//     (Ledger), the row outcomes, Options, New, reading a file within its size limit, and the
//     steps of onboarding it (onboard).
//   - plan.go: one file's run (fileRun): the rows rejected while reading recorded, each hire
//     planned against the ledger (settled from it, or sent), what is still open at the end.
//   - send.go: sending one create, durable in the ledger before it goes out, and resolving the
//     creates whose answer was lost by looking the people up; fileOnly, the ledger of a dry run
//     without a warehouse.
//   - result.go: what a file's onboarding came to (RowResult, FileResult, the file outcomes).
//   - hires.go: reading a CSV of new hires (ReadHireFile), row by row; columns.go: which header
//     cell names which field; csvtext.go: the text as spreadsheets write it (encoding,
//     separator, line ends, the bounded row reader); dates.go: reading join dates, and settling
//     the file's ambiguous ones.
//   - report.go: the report of a file (WriteReport), where it goes, and the log line of a file.
//   - folder.go: the drop folder: private folders and files, ProcessDir, ProcessPath and the
//     moves to processed/ and failed/.
//   - retry.go: retrying the files in failed/ (RetryFailed) and the worker's backoff
//     (FailedRetries).
//   - poll.go: one pass of the folder (Pass) and the worker's job (Job); metrics.go: its
//     Prometheus counters.
package onboard
