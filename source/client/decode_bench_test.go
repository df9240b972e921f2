package client_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
)

// BenchmarkListEmployeesDecode measures the client's cost of reading one full page of 100
// generated employees (the real service's loose style, nested objects and all): the envelope,
// each record's lenient decoding and the nested objects' normalization. The answer comes from a
// loopback server that writes pre-built bytes, so the figure is the client's work, not the
// server's. It is the CPU a sync spends per page besides staging.
func BenchmarkListEmployeesDecode(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(`{"employees":[`)
	for i, raw := range fakeupstream.Generate(client.PerPage, 7) {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(raw)
	}
	body.WriteString(`]}`)
	page := body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Total", "100")
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "bench-key", client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		es, _, err := c.ListEmployees(ctx, 1)
		if err != nil || len(es) != client.PerPage {
			b.Fatalf("list: %d records, %v", len(es), err)
		}
	}
}
