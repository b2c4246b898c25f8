package quire

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetry: a loop of attempts that asks Retry runs again after a stale
// read or a collision, MaxAttempts times at most, with Backoff's pauses,
// and ends on anything else.
func TestRetry(t *testing.T) {
	refused := Errorf(EINSUFFICIENTFUNDS, "short")
	collided := fmt.Errorf("%w: cancelled for TransactionConflict", ErrCollided)
	for _, tc := range []struct {
		name     string
		outcomes []error // of each attempt; the last repeats
		attempts int
		want     error
	}{
		{"done at once", []error{nil}, 1, nil},
		{"a refusal is final", []error{refused}, 1, refused},
		{"read again after a stale read", []error{&Stale{"buyer"}, &Stale{"buyer"}, nil}, 3, nil},
		{"a refusal after a stale read", []error{&Stale{"buyer"}, refused}, 2, refused},
		{"stale every time", []error{&Stale{"buyer"}}, MaxAttempts, &Stale{"buyer"}},
		{"run again after a collision", []error{collided, &Stale{"buyer"}, nil}, 3, nil},
		{"collided every time", []error{collided}, MaxAttempts, collided},
	} {
		// In a bubble, the pauses between attempts take no real time, and
		// each is measured exactly.
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var at []time.Time // of each attempt
				var err error
				for n := 1; ; n++ {
					at = append(at, time.Now())
					again, rerr := Retry(context.Background(), n, tc.outcomes[min(n, len(tc.outcomes))-1])
					if !again {
						err = rerr
						break
					}
				}
				if len(at) != tc.attempts {
					t.Errorf("%d attempts, want %d", len(at), tc.attempts)
				}
				var stale *Stale
				if errors.As(tc.want, &stale) {
					if got, ok := errors.AsType[*Stale](err); !ok || got.What != stale.What {
						t.Errorf("the attempts come to %v, want %v", err, tc.want)
					}
				} else if err != tc.want {
					t.Errorf("the attempts come to %v, want %v", err, tc.want)
				}
				// Each pause is Backoff's: at random, up to twice as long
				// as the one before may be, and never longer than
				// MaxBackoff.
				for n := 1; n < len(at); n++ {
					most := min(MaxBackoff, BaseBackoff<<min(n, 10)) + time.Millisecond
					if d := at[n].Sub(at[n-1]); d < time.Millisecond || d > most {
						t.Errorf("the pause after attempt %d took %v, want 1ms to %v", n, d, most)
					}
				}
			})
		})
	}
	// A context that ends stops the pauses.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if again, err := Retry(ctx, 1, &Stale{"cart"}); again || !errors.Is(err, context.Canceled) {
		t.Errorf("Retry with an ended context = %v, %v", again, err)
	}
}

func TestWriteTime(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	for _, tc := range []struct{ prev, want time.Time }{
		{time.Time{}, now.UTC().Truncate(time.Millisecond)},
		{now.Add(-time.Second), now.UTC().Truncate(time.Millisecond)},
		{now.Truncate(time.Millisecond), now.Truncate(time.Millisecond).Add(time.Millisecond)},
		{now.Add(time.Hour), now.Add(time.Hour).Add(time.Millisecond)},
	} {
		if got := WriteTime(now, tc.prev); !got.Equal(tc.want) {
			t.Errorf("WriteTime(now, %v) = %v, want %v", tc.prev, got, tc.want)
		}
	}
}
