package server

import (
	"fmt"
	"testing"
	"time"
)

// TestAuthLimiterBounded: however many clients fail, at most max are followed, the least
// recently refused forgotten first; a followed client keeps its count.
func TestAuthLimiterBounded(t *testing.T) {
	t.Parallel()
	l := newAuthLimiter(3)
	now := time.Unix(1e9, 0)
	for range AuthFailureBurst {
		l.fail("a", now)
	}
	if ok, retry := l.fail("a", now); ok || retry != time.Second {
		t.Fatalf("a past its burst: %v %v", ok, retry)
	}
	for i := range 1000 {
		l.fail(fmt.Sprint("spray-", i), now)
		if n := l.len(); n > 3 {
			t.Fatalf("%d clients followed", n)
		}
	}
	// a was the least recently refused: forgotten, so it starts again.
	if ok, _ := l.fail("a", now); !ok {
		t.Error("an evicted client is still refused")
	}
	// The recent ones are kept: spray-999 keeps its count.
	for range AuthFailureBurst - 1 {
		l.fail("spray-999", now)
	}
	if ok, _ := l.fail("spray-999", now); ok {
		t.Error("a followed client lost its count")
	}
}
