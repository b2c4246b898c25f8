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
// and deciding again can succeed (see Retry).
type Stale struct{ What string }

func (s *Stale) Error() string { return "stale read: the " + s.What + " changed since it was read" }

// ErrCollided is the error of a commit that another request's commit of
// the same items kept out at the same moment (DynamoDB cancels a
// transaction for a conflict with another one): nothing was written, and
// what was read may have changed. Retry runs the read, the decision and
// the commit again; a collision it does not outlast is ECONFLICT, which
// the same request sent again in a moment gets past.
// A store wraps it with its cause, for the log.
var ErrCollided = &Error{Code: ECONFLICT, Message: "Other requests are changing the same data; retry in a moment."}

// Quire's one retry policy: what fails for a passing reason (a commit
// that found what it read changed, or collided with another request's; a
// DynamoDB call that DynamoDB throttled, failed or left unanswered; keys a
// batch left unprocessed) is tried again after Backoff, a random pause of
// up to BaseBackoff × 2^attempt and at most MaxBackoff, so that requests
// that collided do not collide again. Each kind of attempt has its bound:
// MaxAttempts for a read, a decision and a commit (see Retry), dynamo.MaxAttempts for a DynamoDB call (its
// client's retryer), dynamo's batches theirs.
const (
	BaseBackoff = 25 * time.Millisecond
	MaxBackoff  = 400 * time.Millisecond
	// MaxAttempts bounds how often Retry runs an attempt: enough for a few
	// dozen concurrent changes of one item to all land. DynamoDB holds a
	// transaction's items for some tens of milliseconds, so that a few
	// attempts would let only a handful of two dozen land.
	MaxAttempts = 40
)

// Backoff is the pause before the attempt after attempt (from 1).
func Backoff(attempt int) time.Duration {
	return rand.N(min(MaxBackoff, BaseBackoff<<min(attempt, 10))) + time.Millisecond
}

// Retry reports whether to run again attempt n (from 1) of a read, a
// decision and a commit, which failed with err: after a *Stale error or
// ErrCollided, MaxAttempts times in all, once a Pause is over. Otherwise
// it returns what the attempts come to: err (nil when the commit landed; a
// *Stale error when every attempt found what it read changed, for the
// caller to say what in the client's terms), or ctx's error when ctx ends
// during the pause. It is the one loop of Quire that runs a write again; a
// handler writes
//
//	for n := 1; ; n++ {
//		read, decide, render, then commit:
//		if again, err := quire.Retry(ctx, n, s.Commit(ctx, change)); !again {
//			return err
//		}
//	}
func Retry(ctx context.Context, n int, err error) (bool, error) {
	_, stale := errors.AsType[*Stale](err)
	if !stale && !errors.Is(err, ErrCollided) || n == MaxAttempts {
		return false, err
	}
	if err := Pause(ctx, n); err != nil {
		return false, err
	}
	return true, nil
}

// Pause waits Backoff(attempt), or returns ctx's error when ctx ends first.
func Pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(Backoff(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
