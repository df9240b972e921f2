package budget

import (
	"testing"
	"time"
)

func TestPacingInterval(t *testing.T) {
	tests := []struct {
		perMinute int
		want      time.Duration
	}{
		{60, 1020 * time.Millisecond},
		{600, 102 * time.Millisecond},
		{30, 2040 * time.Millisecond},
		{6000, 10200 * time.Microsecond},
	}
	for _, tt := range tests {
		if got := PacingInterval(tt.perMinute); got != tt.want {
			t.Errorf("PacingInterval(%d) = %v, want %v", tt.perMinute, got, tt.want)
		}
		// Never more than perMinute requests in any minute.
		if n := int(time.Minute/PacingInterval(tt.perMinute)) + 1; n > tt.perMinute {
			t.Errorf("at %d a minute, %d requests fit in one minute", tt.perMinute, n)
		}
	}
}
