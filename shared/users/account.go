package users

import (
	"context"
	"errors"
	"time"

	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/quire"
)

// Change is a decided change of a user, for the store to commit: the user
// as written, only over the user as read (ReadHash).
type Change struct {
	User     User
	ReadHash string
}

// StaleUser is what the commit of a Change may find changed since it was
// read: the What of its *quire.Stale error.
const StaleUser = "user"

// change returns the Change of read into u (read, changed) at now: a new
// updated_at and content hash.
func change(read, u User, now time.Time) Change {
	u.UpdatedAt = quire.WriteTime(now, read.UpdatedAt)
	u.Hash = quire.ContentHash(&u)
	return Change{User: u, ReadHash: read.Hash}
}

// Credit decides the deposit of amount into the account u at now. It
// refuses a closed account (EACCOUNTCLOSED) and a balance that would pass
// MaxBalance (EBALANCELIMIT).
func Credit(u User, amount quire.Money, now time.Time) (Change, error) {
	switch {
	case u.Status != StatusActive:
		return Change{}, quire.Errorf(quire.EACCOUNTCLOSED, "The account %d is closed: it takes no deposits.", u.ID)
	case u.Balance+amount > MaxBalance:
		return Change{}, quire.Errorf(quire.EBALANCELIMIT, "A balance may not exceed %s; this account has %s.", MaxBalance, u.Balance)
	}
	credited := u
	credited.Balance += amount
	return change(u, credited, now), nil
}

// CloseAccount decides the closing of the account u at now: its status
// becomes CLOSED, its balance stays, frozen, and the store ends its
// sessions and its email's logins. It refuses an account closed already
// (EACCOUNTCLOSED).
func CloseAccount(u User, now time.Time) (Change, error) {
	if u.Status != StatusActive {
		return Change{}, quire.Errorf(quire.EACCOUNTCLOSED, "The account %d is closed already.", u.ID)
	}
	closed := u
	closed.Status = StatusClosed
	return change(u, closed, now), nil
}

// Apply changes the user id in s as decide decides, and returns the change:
// it reads the user, decides, and commits with commit (one of the store's
// methods), again when the user changed meanwhile (quire.Again). With
// answer, it commits the change with the record answer returns for it,
// the answer to the request's idempotency key. A user that keeps changing
// is ECONFLICT.
func Apply(ctx context.Context, s Store, id quire.ID, decide func(User, time.Time) (Change, error),
	commit func(context.Context, Change, *idempotency.Record) error, answer func(Change) (*idempotency.Record, error)) (Change, error) {
	var ch Change
	err := quire.Again(ctx, func(int) error {
		u, err := s.Get(ctx, id)
		if err != nil {
			return err
		}
		if ch, err = decide(*u, time.Now()); err != nil {
			return err
		}
		var rec *idempotency.Record
		if answer != nil {
			if rec, err = answer(ch); err != nil {
				return err
			}
		}
		return commit(ctx, ch, rec)
	})
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return Change{}, quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
	}
	return ch, err
}

// Fund credits amount to the account id in s (see Credit), as POST
// /users/{id}/deposit does without an answer: for demo data and tests.
func Fund(ctx context.Context, s Store, id quire.ID, amount quire.Money) (*User, error) {
	ch, err := Apply(ctx, s, id, func(u User, now time.Time) (Change, error) { return Credit(u, amount, now) }, s.CommitDeposit, nil)
	return &ch.User, err
}
