package users

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// Change is a decided change of a user, for the store to commit: the user
// as written, only over the user as read (ReadHash), with the event it
// publishes, if any.
type Change struct {
	User     User
	ReadHash string
	Event    *quire.Event
}

// Funded is the data of a user.funded event: the amount deposited into the
// account and the balance it made.
type Funded struct {
	UserID  quire.ID    `json:"user_id"`
	Amount  quire.Money `json:"amount"`
	Balance quire.Money `json:"balance"`
}

// Gone is the data of a user.closed or user.deleted event: the user's id.
// A consumer that holds the user's data acts on it; the email, which the
// account no longer needs, is not sent.
type Gone struct {
	UserID quire.ID `json:"user_id"`
}

// event returns ch with its event typ carrying data.
func (ch Change) event(typ string, data any) Change {
	ev := quire.NewEvent(typ, "/users/"+ch.User.ID.String(), ch.User.Hash, ch.User.UpdatedAt, data)
	ch.Event = &ev
	return ch
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

// StaleEmail is what the commit of a new user finds when its email's
// reservation exists: another user has the email.
const StaleEmail = "email"

// Signed decides the user u, with a zero balance, stored at now under a new
// id, or under u.ID when it is set (demo data).
func Signed(u User, now time.Time) User {
	now = now.UTC().Truncate(time.Millisecond)
	u.CreatedAt, u.UpdatedAt, u.Balance = now, now, 0
	if u.ID == 0 {
		u.ID = quire.NewID(now)
	}
	u.Hash = quire.ContentHash(&u)
	return u
}

// Create stores u in s with passwordHash, as Signed decides it, and returns
// it as stored: EEMAILTAKEN when another user has its email. A new id that
// is taken (in the same millisecond) is drawn again; a preset id that is
// taken is ECONFLICT. With answer, it commits u with the record answer
// returns for it, the answer to the request's idempotency key.
func Create(ctx context.Context, s Store, u User, passwordHash string, answer func(User) (*idempotency.Record, error)) (User, error) {
	var stored User
	err := quire.Again(ctx, func(int) error {
		stored = Signed(u, time.Now())
		rec, err := idempotency.RecordOf(answer, stored)
		if err != nil {
			return err
		}
		err = s.CommitCreate(ctx, stored, passwordHash, rec)
		switch stale, _ := errors.AsType[*quire.Stale](err); {
		case stale == nil:
			return err
		case stale.What == StaleEmail:
			return quire.Errorf(quire.EEMAILTAKEN, "Another user has the email %s.", u.Email)
		case u.ID != 0:
			// Only the demo data presets ids, never a request: demo.Seed
			// takes this for a user stored already.
			return quire.Errorf(quire.ECONFLICT, "The id %d is taken.", u.ID)
		}
		return err // the new id was taken: draw again
	})
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return User{}, fmt.Errorf("create user: no free id after %d attempts: %w", quire.MaxAttempts, err)
	}
	return stored, err
}

// Credit decides the deposit of amount into the account u at now, and its
// user.funded event. It
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
	ch := change(u, credited, now)
	return ch.event(quire.EventUserFunded, Funded{UserID: u.ID, Amount: amount, Balance: credited.Balance}), nil
}

// CloseAccount decides the closing of the account u at now: its status
// becomes CLOSED, its balance stays, frozen, and the store ends its
// sessions and its email's logins; and its user.closed event. It refuses an account closed already
// (EACCOUNTCLOSED).
func CloseAccount(u User, now time.Time) (Change, error) {
	if u.Status != StatusActive {
		return Change{}, quire.Errorf(quire.EACCOUNTCLOSED, "The account %d is closed already.", u.ID)
	}
	closed := u
	closed.Status = StatusClosed
	return change(u, closed, now).event(quire.EventUserClosed, Gone{UserID: u.ID}), nil
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
			return noUser(err, id)
		}
		if ch, err = decide(*u, time.Now()); err != nil {
			return err
		}
		rec, err := idempotency.RecordOf(answer, ch)
		if err != nil {
			return err
		}
		err = commit(ctx, ch, rec)
		if stale, ok := errors.AsType[*quire.Stale](err); ok && stale.What != StaleUser {
			return fmt.Errorf("change user %d: the %s is not as stored", id, stale.What) // no read again mends it
		}
		return err
	})
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return Change{}, quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
	}
	return ch, err
}

// noSuchUser is the detail of ENOTFOUND for a user id.
const noSuchUser = "No user has the id %d."

// noUser says a store's ENOTFOUND for the user id in the users' words; any
// other err stays as it is.
func noUser(err error, id quire.ID) error {
	return quire.Reword(err, quire.ENOTFOUND, noSuchUser, id)
}

// Fund credits amount to the account id in s (see Credit), as POST
// /users/{id}/deposit does without an answer: for demo data and tests.
func Fund(ctx context.Context, s Store, id quire.ID, amount quire.Money) (*User, error) {
	ch, err := Apply(ctx, s, id, func(u User, now time.Time) (Change, error) { return Credit(u, amount, now) }, s.CommitDeposit, nil)
	return &ch.User, err
}
