// Package storedb hands the tests of other packages (through sinktest.DB) the connections of a
// sink.Store, which sink does not export: the warehouse's SQL stays in sink, and a test that
// must look at or break a table from outside says so by importing sinktest.
package storedb

import "github.com/jmoiron/sqlx"

// Of returns the connections of a *sink.Store; set by package sink.
var Of func(store any) *sqlx.DB
