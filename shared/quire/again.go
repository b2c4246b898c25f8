package quire

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Stale is the error of a commit that found something it was conditioned
// on changed since it was read: What names it ("buyer", "cart"), as the
// store interface that returns it says. Nothing was written; reading again
// and deciding again can succeed (see Again).
type Stale struct{ What string }

func (s *Stale) Error() string { return "stale read: the " + s.What + " changed since it was read" }

// MaxAttempts bounds how often Again runs an attempt: enough for a few
// dozen concurrent changes of one item to all land.
const MaxAttempts = 40

// Again runs attempt (a read, a decision and a commit), and runs it again
// after a pause (see Pause) while it fails with a *Stale error, MaxAttempts
// times at most. attempt gets its number, from 1. Again returns attempt's
// last error, nil or not: a *Stale one when every attempt found what it
// read changed, for the caller to say what in the client's terms; ctx's
// error when ctx ends during a pause.
func Again(ctx context.Context, attempt func(n int) error) error {
	for n := 1; ; n++ {
		err := attempt(n)
		if _, stale := errors.AsType[*Stale](err); !stale || n == MaxAttempts {
			return err
		}
		if err := Pause(ctx, n); err != nil {
			return err
		}
	}
}

// Pause waits a little before the next attempt of something that collided
// with another request: longer with each attempt and at random, so that
// requests that collided do not collide again. It returns ctx's error when
// ctx ends first.
func Pause(ctx context.Context, attempt int) error {
	d := time.Duration(min(attempt, 5)*5+rand.IntN(20)) * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// WriteTime is the updated_at of a write at now over a resource last
// written at prev: now to the millisecond, in UTC, and always after prev.
func WriteTime(now, prev time.Time) time.Time {
	t := now.UTC().Truncate(time.Millisecond)
	if !t.After(prev) {
		t = prev.Add(time.Millisecond)
	}
	return t
}
