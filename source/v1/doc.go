// Package v1 is the Employee Records service's /v1 wire format, shared by the client of an
// account (package client), serve mode's handler (package server), the warehouse (package sink)
// and the fake upstream: the records and their lenient decoding, Link/Total/paging parsing and
// formatting, error bodies and the errors both ends share, and the create input with its
// validation and encodings. It holds no HTTP client or server and no database, so its tests
// run with plain go test.
package v1
