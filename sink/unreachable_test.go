package sink_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
)

func TestUnreachable(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("open warehouse x: %w", dial), true},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, true},
		{"no such host", &net.DNSError{Err: "no such host", Name: "db", IsNotFound: true}, true},
		{"reset mid-read", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"bad connection", fmt.Errorf("list employees: %w", driver.ErrBadConn), true},
		{"no answer", fmt.Errorf("read: %w", sink.ErrNoAnswer), true},
		{"too many connections", &pq.Error{Code: "53300"}, true},
		{"admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"crash shutdown", &pq.Error{Code: "57P02"}, true},
		{"cannot connect now", &pq.Error{Code: "57P03"}, true},
		{"connection failure", &pq.Error{Code: "08006"}, true},
		{"file gone", &fs.PathError{Op: "stat", Path: "/mnt/wh.db", Err: syscall.ENOENT}, true},
		{"file denied", &fs.PathError{Op: "open", Path: "/mnt/wh.db", Err: syscall.EACCES}, true},
		{"schema of a newer build", fmt.Errorf("open warehouse x: %w", &schema.AheadError{Current: 32, Latest: 31}), true},
		{"syntax error", &pq.Error{Code: "42601"}, false},
		{"no such table", &pq.Error{Code: "42P01"}, false},
		{"query canceled", &pq.Error{Code: "57014"}, false},
		{"request deadline", fmt.Errorf("list: %w", context.DeadlineExceeded), false},
		{"request canceled", context.Canceled, false},
		{"busy", fmt.Errorf("%w: %w", sink.ErrBusy, &pq.Error{Code: "55P03"}), false},
		{"plain", errors.New("scan employee: bad JSON"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sink.Unreachable(tt.err)
			if is := errors.Is(got, sink.ErrUnreachable); is != tt.want {
				t.Fatalf("Unreachable(%v) wraps ErrUnreachable: %v, want %v", tt.err, is, tt.want)
			}
			if tt.err != nil && !errors.Is(got, tt.err) {
				t.Errorf("Unreachable(%v) = %v: lost the cause", tt.err, got)
			}
			if tt.err == nil && got != nil {
				t.Errorf("Unreachable(nil) = %v", got)
			}
			if again := sink.Unreachable(got); again != got {
				t.Errorf("marked twice: %v", again)
			}
		})
	}
}
