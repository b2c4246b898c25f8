package quire

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestAgain(t *testing.T) {
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
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := Again(context.Background(), func(attempt int) error {
				n++
				if attempt != n {
					t.Fatalf("attempt %d numbered %d", n, attempt)
				}
				return tc.outcomes[min(n, len(tc.outcomes))-1]
			})
			if n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
			var stale *Stale
			if errors.As(tc.want, &stale) {
				if got, ok := errors.AsType[*Stale](err); !ok || got.What != stale.What {
					t.Errorf("Again = %v, want %v", err, tc.want)
				}
			} else if err != tc.want {
				t.Errorf("Again = %v, want %v", err, tc.want)
			}
		})
	}
	// A context that ends stops the pauses.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Again(ctx, func(int) error { return &Stale{"cart"} }); !errors.Is(err, context.Canceled) {
		t.Errorf("Again with an ended context = %v", err)
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
