package users

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// Stored is a user as a replacement reads it: the user, and what its
// email's reservation carries, the password hash and the session epoch,
// which a moved reservation keeps.
type Stored struct {
	User         User
	PasswordHash string
	Epoch        int64
}

// Revision is a decided replacement of a user's fields, for the store to
// commit whole or not at all: the user as written, only over the user as
// read (ReadHash); a new password hash, or "" to keep the stored one; the
// end of the user's sessions (its epoch moves on); the move of the email's
// reservation from OldEmail, carrying Carried's password hash and epoch;
// and, for a change proved by the current password, the end of the
// guesses counted against the old email (the proof counted one).
type Revision struct {
	User        User
	ReadHash    string
	OldEmail    string
	Password    string
	EndSessions bool
	Proved      bool
	Carried     Stored
}

// MovesEmail reports whether the revision changes the email, whose
// reservation then moves.
func (r Revision) MovesEmail() bool { return EmailKey(r.OldEmail) != EmailKey(r.User.Email) }

// StaleReservation is what the commit of a Revision may find, besides a
// user not as read (StaleUser) and a new email another user has
// (StaleEmail): the old email's reservation gone.
const StaleReservation = "reservation"

// NeedsProof reports whether replacing read with u and a new password
// (passwordHash, "" for none) changes the email or the password: a user's
// own change of either needs their current password, so that a stolen
// access token cannot take the account over.
func NeedsProof(read, u User, newPassword bool) bool {
	return newPassword || EmailKey(read.Email) != EmailKey(u.Email)
}

// OwnStanding refuses a change of one's own role or status, u's over read
// (a zero role or status keeps the stored one): EINVALID naming each field.
// Another admin closes, reopens, promotes and demotes an account; its owner
// closes it with POST /users/{id}/close. So a closed admin cannot reopen
// itself, nor an admin make itself anything but what another admin made it.
func OwnStanding(read, u User, by quire.ID) error {
	if by != read.ID {
		return nil
	}
	var errs []quire.FieldError
	if u.Role != "" && u.Role != read.Role {
		errs = append(errs, quire.FieldError{Pointer: "/role", Detail: NotOwnToChange})
	}
	if u.Status != "" && u.Status != read.Status {
		errs = append(errs, quire.FieldError{Pointer: "/status", Detail: NotOwnToChange})
	}
	if errs != nil {
		return quire.Invalid(errs...)
	}
	return nil
}

// NotOwnToChange is why a change of one's own role or status is refused.
const NotOwnToChange = "is not one's own to change: another admin changes it"

// Revise decides u's writable fields, and the new password passwordHash
// when set, over read at now, proved by the current password or not: the
// stored role and status stay where u's are zero, the balance, profile and
// creation time stay, and a new password, role or status ends the user's
// sessions: their tokens' role or status, or the password that started
// them, is no longer the user's.
func Revise(read Stored, u User, passwordHash string, proved bool, now time.Time) Revision {
	old := read.User
	if u.Role == "" {
		u.Role = old.Role
	}
	if u.Status == "" {
		u.Status = old.Status
	}
	u.ID, u.Balance, u.Profile, u.CreatedAt = old.ID, old.Balance, old.Profile, old.CreatedAt
	u.UpdatedAt = quire.WriteTime(now, old.UpdatedAt)
	u.Hash = quire.ContentHash(&u)
	r := Revision{
		User: u, ReadHash: old.Hash, OldEmail: old.Email, Password: passwordHash, Proved: proved,
		EndSessions: passwordHash != "" || u.Role != old.Role || u.Status != old.Status,
		Carried:     Stored{PasswordHash: read.PasswordHash, Epoch: read.Epoch},
	}
	if passwordHash != "" {
		r.Carried.PasswordHash = passwordHash
	}
	if r.EndSessions {
		r.Carried.Epoch++
	}
	return r
}

// Replace stores u's writable fields, and a new password when hash is set
// (it hashes it), over the user u.ID in s, if the user holds pre, and
// returns it as stored. It reads the user, decides (Revise), and commits,
// again when the user changed meanwhile, which checks pre again. With
// prove (a user's own change), a change of the email or the password first
// passes prove with the stored credentials, once for the credentials it
// proves, and commits clearing the guesses counted against the email (see
// login.Reserve). The new password is hashed once, after the proof: a
// locked email (login.Locked) costs no hash. It returns ENOTFOUND for no
// such user, EPRECONDITION, EINVALID for a change of one's own role or
// status (see OwnStanding), and EEMAILTAKEN when another user has u's
// email.
func Replace(ctx context.Context, s Store, by quire.ID, u User, hash func() string, pre quire.Precondition, prove func(Credentials) error) (User, error) {
	var (
		rev          Revision
		proven       *Credentials
		passwordHash string
	)
	err := quire.Again(ctx, func(int) error {
		read, err := s.Stored(ctx, u.ID)
		if err != nil {
			return noUser(err, u.ID)
		}
		if err := pre.Check(read.User.Hash); err != nil {
			return err
		}
		if err := OwnStanding(read.User, u, by); err != nil {
			return err
		}
		proof := prove != nil && NeedsProof(read.User, u, hash != nil)
		if c := (Credentials{Email: read.User.Email, PasswordHash: read.PasswordHash}); proof && (proven == nil || *proven != c) {
			if err := prove(c); err != nil {
				return err
			}
			proven = &c
		}
		if hash != nil && passwordHash == "" {
			passwordHash = hash()
		}
		rev = Revise(read, u, passwordHash, proof, time.Now())
		err = s.CommitRevision(ctx, rev)
		switch stale, _ := errors.AsType[*quire.Stale](err); {
		case stale == nil || stale.What == StaleUser:
			return err
		case stale.What == StaleEmail:
			return quire.Errorf(quire.EEMAILTAKEN, "Another user has the email %s.", rev.User.Email)
		default:
			return fmt.Errorf("replace user %d: the %s is not as stored", u.ID, stale.What)
		}
	})
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return User{}, quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", u.ID)
	}
	return rev.User, err
}

// ReplaceProfile stores p as the profile of the user id in s, if the user
// holds pre, and returns the user as stored (see Apply): ENOTFOUND for no
// such user, and EPRECONDITION.
func ReplaceProfile(ctx context.Context, s Store, id quire.ID, p Profile, pre quire.Precondition) (User, error) {
	ch, err := Apply(ctx, s, id, func(u User, now time.Time) (Change, error) {
		if err := pre.Check(u.Hash); err != nil {
			return Change{}, err
		}
		changed := u
		changed.Profile = p
		return change(u, changed, now), nil
	}, s.CommitProfile, nil)
	return ch.User, err
}

// Deletion is a decided deletion of a user, for the store to commit whole
// or not at all: the user, only as read (its content hash), what belongs
// to it alone (its email's reservation and failed logins, its cart), and
// its sessions, those the store listed; More says it has more, which end
// after the commit (they cannot be resumed once their user is gone); and
// its user.deleted event.
type Deletion struct {
	User     User
	Sessions []string
	More     bool
	Event    *quire.Event
}

// Removed is the data of a user.deleted event: the user's id, and the
// balance the account held. One's own account goes only once its balance
// is zero; an admin deletes a funded one, whose balance the shop refunds
// outside Quire, and the event records it.
type Removed struct {
	UserID  quire.ID    `json:"user_id"`
	Balance quire.Money `json:"balance"`
}

// Deleted decides the deletion of u on behalf of the user by at now: its
// user.deleted event. It refuses one's own account while its balance is
// not zero (EBALANCENOTZERO), which would leave with no record of where it
// went.
func Deleted(u User, by quire.ID, now time.Time) (*quire.Event, error) {
	if by == u.ID && u.Balance != 0 {
		return nil, quire.Errorf(quire.EBALANCENOTZERO, "The account holds %s; it can be deleted once its balance is zero: "+
			"spend it, or ask the shop to refund it and delete the account.", u.Balance)
	}
	ev := quire.NewEvent(quire.EventUserDeleted, "/users/"+u.ID.String(), u.Hash, now, Removed{UserID: u.ID, Balance: u.Balance})
	return &ev, nil
}

// Delete removes the user id from s on behalf of the user by, if it holds
// pre, with what belongs to it alone (see Deletion): ENOTFOUND for no such
// user, EPRECONDITION, what prove and Deleted refuse, and in either case
// nothing changes. With prove (one's own deletion), the user that holds
// pre first passes prove with the stored credentials, once; the deletion
// ends the guesses counted against the email with the rest. Orders and idempotency records stay.
// The user and its sessions are read at once, and read again when the
// user changed meanwhile.
func Delete(ctx context.Context, s Store, by, id quire.ID, pre quire.Precondition, prove func(Credentials) error) error {
	proved := false
	err := quire.Again(ctx, func(int) error {
		var (
			d    Deletion
			read Stored
		)
		err := quire.Concurrently(
			func() (err error) { read, err = s.Stored(ctx, id); return noUser(err, id) },
			func() (err error) { d.Sessions, d.More, err = s.Sessions(ctx, id); return err },
		)
		if err != nil {
			return err
		}
		if err := pre.Check(read.User.Hash); err != nil {
			return err
		}
		if prove != nil && !proved {
			if err := prove(Credentials{Email: read.User.Email, PasswordHash: read.PasswordHash}); err != nil {
				return err
			}
			proved = true
		}
		d.User = read.User
		if d.Event, err = Deleted(d.User, by, time.Now()); err != nil {
			return err
		}
		return s.CommitDelete(ctx, d)
	})
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
	}
	return err
}
