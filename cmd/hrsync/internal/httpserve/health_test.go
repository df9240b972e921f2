package httpserve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"
)

// A health answer is valid JSON whatever bytes the reason holds (a driver's error text).
func TestWriteHealthIsJSON(t *testing.T) {
	for _, reason := range []string{"", "plain", `quote " and \ backslash`, "nul \x00 and escape \x1b[31m", "bad utf-8 \xff\xfe", "line\u2028separator", "<html>"} {
		rec := httptest.NewRecorder()
		writeHealth(rec, http.StatusServiceUnavailable, "unavailable", reason, "")
		body := rec.Body.Bytes()
		var got struct {
			Status string  `json:"status"`
			Reason *string `json:"reason"`
		}
		if !json.Valid(body) || json.Unmarshal(body, &got) != nil {
			t.Errorf("reason %q: body is not JSON: %q", reason, body)
			continue
		}
		if got.Status != "unavailable" || (reason == "") != (got.Reason == nil) {
			t.Errorf("reason %q: body %s", reason, body)
		}
		if reason != "" && utf8.ValidString(reason) && reason != *got.Reason {
			t.Errorf("reason %q reads back as %q", reason, *got.Reason)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}
