package onboard

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadRefusesAFileThatGrows: the size limit holds while a file is read, not only for the
// size it had when it was opened: a file that grows past it is refused, not read to its end.
func TestReadRefusesAFileThatGrows(t *testing.T) {
	t.Parallel()
	o := New(nil, nil, Options{MaxFileBytes: 1 << 10})
	data := "First name,Last name,Email,Join date\n" + strings.Repeat("Ann,Lee,ann@example.com,2026-12-01\n", 100)
	for name, size := range map[string]int64{"size unknown": 0, "grew since opened": 100} {
		t.Run(name, func(t *testing.T) {
			r := &countingReader{r: iotest.HalfReader(strings.NewReader(data))}
			_, _, err := o.read(r, size)
			var big *FileTooLargeError
			if !errors.As(err, &big) || big.Size != 0 || big.Limit != 1<<10 {
				t.Fatalf("err = %v", err)
			}
			if want := "the file grew over the limit of 1 KiB (1024 bytes) while it was read (onboarding.max_file_bytes, HRSYNC_ONBOARDING_MAX_FILE_BYTES): split it into smaller files, or raise the limit"; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			if r.n > 1<<10+1 {
				t.Errorf("%d bytes read past a limit of 1024", r.n)
			}
		})
	}
	if _, _, err := o.read(strings.NewReader(data[:1<<10]), 1<<10); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
