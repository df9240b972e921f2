// Package personal is what hrsync's personal-data commands write (docs/personal-data.md): the
// data inventory (`hrsync inventory`, text, CSV or markdown, with its retention column), the
// subject-access document (`hrsync subject-access`: HTML to read and print, JSON and CSV,
// written privately and atomically), and what `hrsync erase` and `hrsync retention` print. It
// writes counts and names of tables and classes, never a person's value, except into the export.
// Package main parses the flags, opens the warehouse and hands this package what it read.
package personal
