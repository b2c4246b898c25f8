package users_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/quiretest"
	"github.com/quireapi/quire/internal/users"
)

// asRead is a customer with balance and status, as read.
func asRead(balance quire.Money, status users.Status, updated time.Time) users.User {
	u := users.User{ID: 7, Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", Role: quire.RoleCustomer,
		Status: status, Balance: balance, CreatedAt: updated.Add(-time.Hour), UpdatedAt: updated}
	u.Hash = quire.ContentHash(&u)
	return u
}

// Deposits and closings are decided with no store: every refusal, and for
// a change the user as written, with its new updated_at and content hash,
// over the user as read, and its event.
func TestAccountDecisions(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 987654321, time.UTC)
	earlier := now.Add(-time.Minute)
	credit := func(amount quire.Money) func(users.User, time.Time) (users.Change, error) {
		return func(u users.User, now time.Time) (users.Change, error) { return users.Credit(u, amount, now) }
	}
	for _, tc := range []struct {
		name   string
		read   users.User
		decide func(users.User, time.Time) (users.Change, error)
		now    time.Time
		code   string
		detail string
		want   func(*users.User)
		event  string
		data   any
	}{
		{name: "a deposit", read: asRead(10_00, users.StatusActive, earlier), decide: credit(20_00), now: now,
			want:  func(u *users.User) { u.Balance = 30_00 },
			event: quire.EventUserFunded, data: users.Funded{UserID: 7, Amount: 20_00, Balance: 30_00}},
		{name: "a deposit up to the cap", read: asRead(users.MaxBalance-1, users.StatusActive, earlier), decide: credit(1), now: now,
			want:  func(u *users.User) { u.Balance = users.MaxBalance },
			event: quire.EventUserFunded, data: users.Funded{UserID: 7, Amount: 1, Balance: users.MaxBalance}},
		{name: "a deposit past the cap", read: asRead(users.MaxBalance-1, users.StatusActive, earlier), decide: credit(2), now: now,
			code: quire.EBALANCELIMIT, detail: "A balance may not exceed 1000000.00; this account has 999999.99."},
		{name: "a deposit into a closed account", read: asRead(0, users.StatusClosed, earlier), decide: credit(1), now: now,
			code: quire.EACCOUNTCLOSED, detail: "The account 7 is closed: it takes no deposits."},
		{name: "a deposit with a clock behind the last write", read: asRead(0, users.StatusActive, now), decide: credit(5), now: earlier,
			want:  func(u *users.User) { u.Balance, u.UpdatedAt = 5, now.Add(time.Millisecond) },
			event: quire.EventUserFunded, data: users.Funded{UserID: 7, Amount: 5, Balance: 5}},
		{name: "a closing", read: asRead(12_34, users.StatusActive, earlier), decide: users.CloseAccount, now: now,
			want:  func(u *users.User) { u.Status = users.StatusClosed },
			event: quire.EventUserClosed, data: users.Gone{UserID: 7}},
		{name: "a closing of a closed account", read: asRead(12_34, users.StatusClosed, earlier), decide: users.CloseAccount, now: now,
			code: quire.EACCOUNTCLOSED, detail: "The account 7 is closed already."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := tc.decide(tc.read, tc.now)
			if quiretest.Refused(t, err, tc.code, tc.detail) {
				return
			}
			want := tc.read
			want.UpdatedAt = tc.now.Truncate(time.Millisecond)
			tc.want(&want)
			want.Hash = quire.ContentHash(&want)
			ev := quire.NewEvent(tc.event, "/users/7", want.Hash, want.UpdatedAt, tc.data)
			if diff := cmp.Diff(users.Change{User: want, ReadHash: tc.read.Hash, Event: &ev}, ch); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
		})
	}
}

// A new user is stored with a zero balance whatever it says, its times,
// its content hash, and a new id unless it has one (demo data).
func TestSigned(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 987654321, time.UTC)
	in := users.User{Email: "ada@example.com", FirstName: "Ada", Role: quire.RoleCustomer, Status: users.StatusActive, Balance: 99}
	ch := users.Signed(in, now)
	u := ch.User
	at := now.Truncate(time.Millisecond)
	if u.ID <= 0 || u.Balance != 0 || !u.CreatedAt.Equal(at) || !u.UpdatedAt.Equal(at) || u.Hash != quire.ContentHash(&u) || ch.ReadHash != "" {
		t.Errorf("Signed = %+v", ch)
	}
	if ev := quire.NewEvent(quire.EventUserCreated, "/users/"+u.ID.String(), u.Hash, at, users.Gone{UserID: u.ID}); !cmp.Equal(ch.Event, &ev) {
		t.Errorf("Signed's event = %+v, want %+v", ch.Event, ev)
	}
	if again := users.Signed(in, now).User; again.ID == u.ID && users.Signed(in, now).User.ID == u.ID {
		t.Errorf("three new users of one millisecond have the id %d", u.ID)
	}
	in.ID = 2
	if u := users.Signed(in, now).User; u.ID != 2 {
		t.Errorf("a preset id became %d", u.ID)
	}
}
