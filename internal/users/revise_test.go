package users_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
)

// A replacement of a user's fields is decided with no store: what it
// keeps, when it needs the current password, when it ends the sessions,
// and what a moved email's reservation carries.
func TestRevise(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	read := users.Stored{User: asRead(12_34, users.StatusActive, now.Add(-time.Minute)), PasswordHash: "old-hash", Epoch: 3}
	read.User.Profile = users.Profile{Bio: "Poet"}
	read.User.Hash = quire.ContentHash(&read.User)
	sent := func(change func(*users.User)) users.User {
		u := users.User{ID: 7, Email: "ada@example.com", FirstName: "Augusta Ada", LastName: "King", Balance: 99_99}
		if change != nil {
			change(&u)
		}
		return u
	}
	for _, tc := range []struct {
		name        string
		u           users.User
		password    string
		proof       bool
		endSessions bool
		moves       bool
		carried     users.Stored
		role        quire.Role
		status      users.Status
		closed      bool     // user.closed
		changed     []string // user.changed's fields
	}{
		{name: "new names", u: sent(nil), carried: users.Stored{PasswordHash: "old-hash", Epoch: 3},
			role: quire.RoleCustomer, status: users.StatusActive, changed: []string{"first_name", "last_name"}},
		{name: "a new password", u: sent(nil), password: "new-hash", proof: true, endSessions: true,
			carried: users.Stored{PasswordHash: "new-hash", Epoch: 4}, role: quire.RoleCustomer, status: users.StatusActive,
			changed: []string{"first_name", "last_name", "password"}},
		{name: "a new email", u: sent(func(u *users.User) { u.Email = "ada@lovelace.example" }), proof: true, moves: true,
			carried: users.Stored{PasswordHash: "old-hash", Epoch: 3}, role: quire.RoleCustomer, status: users.StatusActive,
			changed: []string{"email", "first_name", "last_name"}},
		{name: "the email in other case", u: sent(func(u *users.User) { u.Email = "ADA@example.com" }),
			carried: users.Stored{PasswordHash: "old-hash", Epoch: 3}, role: quire.RoleCustomer, status: users.StatusActive,
			changed: []string{"email", "first_name", "last_name"}},
		{name: "an admin's new role", u: sent(func(u *users.User) { u.Role = quire.RoleAdmin }), endSessions: true,
			carried: users.Stored{PasswordHash: "old-hash", Epoch: 4}, role: quire.RoleAdmin, status: users.StatusActive,
			changed: []string{"first_name", "last_name", "role"}},
		{name: "an admin's closing", u: sent(func(u *users.User) { u.Status = users.StatusClosed }), endSessions: true,
			carried: users.Stored{PasswordHash: "old-hash", Epoch: 4}, role: quire.RoleCustomer, status: users.StatusClosed,
			closed: true, changed: []string{"first_name", "last_name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := users.NeedsProof(read.User, tc.u, tc.password != ""); got != tc.proof {
				t.Errorf("NeedsProof = %v, want %v", got, tc.proof)
			}
			rev := users.Revise(read, tc.u, tc.password, tc.proof, now)
			want := tc.u
			want.Role, want.Status = tc.role, tc.status
			want.Balance, want.Profile, want.CreatedAt, want.UpdatedAt = 12_34, read.User.Profile, read.User.CreatedAt, now
			want.Hash = quire.ContentHash(&want)
			var events []quire.Event
			if tc.closed {
				events = append(events, quire.NewEvent(quire.EventUserClosed, "/users/7", want.Hash, now, users.Gone{UserID: 7}))
			}
			if tc.changed != nil {
				events = append(events, quire.NewEvent(quire.EventUserChanged, "/users/7", want.Hash, now, users.Altered{UserID: 7, Changed: tc.changed}))
			}
			if diff := cmp.Diff(users.Revision{
				User: want, ReadHash: read.User.Hash, OldEmail: "ada@example.com", Password: tc.password,
				EndSessions: tc.endSessions, Proved: tc.proof, Carried: tc.carried, Events: events,
			}, rev); diff != "" {
				t.Errorf("revision (-want +got):\n%s", diff)
			}
			if rev.MovesEmail() != tc.moves {
				t.Errorf("MovesEmail = %v, want %v", rev.MovesEmail(), tc.moves)
			}
		})
	}
}

// TestOwnStanding: no one changes their own role or status; a role or
// status left out, or as stored, is no change; another's account is an
// admin's to change.
func TestOwnStanding(t *testing.T) {
	read := users.User{ID: 1, Role: quire.RoleAdmin, Status: users.StatusClosed}
	for _, tc := range []struct {
		name string
		u    users.User
		by   quire.ID
		code string
	}{
		{"one's own reopening", users.User{Status: users.StatusActive}, 1, quire.EINVALID},
		{"one's own demotion", users.User{Role: quire.RoleCustomer}, 1, quire.EINVALID},
		{"one's own role and status as stored", users.User{Role: quire.RoleAdmin, Status: users.StatusClosed}, 1, ""},
		{"one's own names alone", users.User{FirstName: "Ada"}, 1, ""},
		{"another admin's reopening", users.User{Status: users.StatusActive}, 2, ""},
	} {
		if got := quire.ErrorCode(users.OwnStanding(read, tc.u, tc.by)); got != tc.code {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.code)
		}
	}
}
