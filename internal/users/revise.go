package users

import (
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

// Credentials are s's email and password hash, which a proof of the
// current password is checked against.
func (s Stored) Credentials() Credentials {
	return Credentials{Email: s.User.Email, PasswordHash: s.PasswordHash}
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
	// Events are what the revision publishes: user.closed or
	// user.reopened when it closes or reopens the account, user.changed
	// when it changes another field.
	Events []quire.Event
}

// Altered is the data of a user.changed event: the user's id and the
// names of the fields that changed ("email", "password", "bio"...), never
// their values.
type Altered struct {
	UserID  quire.ID `json:"user_id"`
	Changed []string `json:"changed"`
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
	subject := "/users/" + u.ID.String()
	switch {
	case old.Status == StatusActive && u.Status == StatusClosed:
		r.Events = append(r.Events, quire.NewEvent(quire.EventUserClosed, subject, u.Hash, now, Gone{UserID: u.ID}))
	case old.Status == StatusClosed && u.Status == StatusActive:
		r.Events = append(r.Events, quire.NewEvent(quire.EventUserReopened, subject, u.Hash, now, Gone{UserID: u.ID}))
	}
	if changed := changes([]field{
		{"email", old.Email != u.Email}, {"first_name", old.FirstName != u.FirstName}, {"last_name", old.LastName != u.LastName},
		{"role", old.Role != u.Role}, {"password", passwordHash != ""},
	}); changed != nil {
		r.Events = append(r.Events, quire.NewEvent(quire.EventUserChanged, subject, u.Hash, now, Altered{UserID: u.ID, Changed: changed}))
	}
	return r
}

// field is a field of a user a change may change, by name.
type field struct {
	name    string
	changed bool
}

// changes returns the names of the fields of fs that changed, in order, or
// nil.
func changes(fs []field) []string {
	var out []string
	for _, f := range fs {
		if f.changed {
			out = append(out, f.name)
		}
	}
	return out
}

// Reprofiled decides p as the profile of u at now, if u holds pre:
// EPRECONDITION otherwise.
func Reprofiled(u User, p Profile, pre quire.Precondition, now time.Time) (Change, error) {
	if err := pre.Check(u.Hash); err != nil {
		return Change{}, err
	}
	changed := u
	changed.Profile = p
	ch := change(u, changed, now)
	if fields := changes([]field{
		{"bio", u.Profile.Bio != p.Bio}, {"location", u.Profile.Location != p.Location}, {"website", u.Profile.Website != p.Website},
		{"newsletter", u.Profile.Newsletter != p.Newsletter},
	}); fields != nil {
		ch = ch.event(quire.EventUserChanged, Altered{UserID: u.ID, Changed: fields})
	}
	return ch, nil
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
