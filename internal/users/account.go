package users

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// Gone is the data of a user.created or user.closed event: the user's id.
// A consumer that holds the user's data reads it from the API; the email
// and the names are not sent.
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
// id, or under u.ID when it is set (demo data), and its user.created
// event.
func Signed(u User, now time.Time) Change {
	now = now.UTC().Truncate(time.Millisecond)
	u.CreatedAt, u.UpdatedAt, u.Balance = now, now, 0
	if u.ID == 0 {
		u.ID = quire.NewID(now)
	}
	u.Hash = quire.ContentHash(&u)
	return Change{User: u}.event(quire.EventUserCreated, Gone{UserID: u.ID})
}

// Create stores u in s with passwordHash, as Signed decides it, and returns
// it as stored, without an answer to record: demo data, and the users the
// tests and the soak set up (POST /users is the HTTP layer's). It returns
// EEMAILTAKEN when another user has u's email, and ECONFLICT when u.ID is
// set and taken, which demo.Seed takes for a user stored already.
func Create(ctx context.Context, s Store, u User, passwordHash string) (User, error) {
	for n := 1; ; n++ {
		ch := Signed(u, time.Now())
		err := Committed(s.CommitCreate(ctx, ch, passwordHash, nil), ch.User)
		if _, stale := errors.AsType[*quire.Stale](err); stale && u.ID != 0 {
			return User{}, quire.Errorf(quire.ECONFLICT, "The id %d is taken.", u.ID)
		}
		if again, err := quire.Retry(ctx, n, err); !again {
			return ch.User, NoFreeID(err)
		}
	}
}

// NoFreeID is the error of a sign-up's commits, when every one drew a
// taken id: an internal error.
func NoFreeID(err error) error {
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return fmt.Errorf("create user: no free id after %d attempts: %w", quire.MaxAttempts, err)
	}
	return err
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

// Committed says in the users' words what the commit of a change of the
// user u returned: the user not as read stays a *quire.Stale, to read and
// decide again (see quire.Retry); another user's email is EEMAILTAKEN;
// another part of the change not as stored is an internal error, which no
// read again mends.
func Committed(err error, u User) error {
	stale, ok := errors.AsType[*quire.Stale](err)
	switch {
	case !ok || stale.What == StaleUser:
		return err
	case stale.What == StaleEmail:
		return quire.Errorf(quire.EEMAILTAKEN, "Another user has the email %s.", u.Email)
	}
	return fmt.Errorf("change user %d: the %s is not as stored", u.ID, stale.What)
}

// Changed is the error of a change of the user id whose every attempt
// found the user changed since it was read: ECONFLICT.
func Changed(err error, id quire.ID) error {
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
	}
	return err
}

// NoSuchUser is the detail of ENOTFOUND for a user id.
const NoSuchUser = "No user has the id %d."

// NoUser says a store's ENOTFOUND for the user id in the users' words; any
// other err stays as it is.
func NoUser(err error, id quire.ID) error {
	return quire.Reword(err, quire.ENOTFOUND, NoSuchUser, id)
}

// Fund credits amount to the account id in s (see Credit), without an
// answer to record: demo data, and the accounts the tests and the soak set
// up (POST /users/{id}/deposit is the HTTP layer's).
func Fund(ctx context.Context, s Store, id quire.ID, amount quire.Money) (*User, error) {
	for n := 1; ; n++ {
		u, err := s.Get(ctx, id)
		if err != nil {
			return nil, NoUser(err, id)
		}
		ch, err := Credit(*u, amount, time.Now())
		if err != nil {
			return nil, err
		}
		if again, err := quire.Retry(ctx, n, Committed(s.CommitDeposit(ctx, ch, nil), ch.User)); !again {
			return &ch.User, Changed(err, id)
		}
	}
}
