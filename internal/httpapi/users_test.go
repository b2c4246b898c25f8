package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/users"
)

// store is a users.Store whose reads and commits a test scripts; its other
// methods are not called.
type store struct {
	users.Store
	read      users.Stored
	reads     int
	commits   []error // what each commit returns, the last repeating
	committed int
	guesses   int // of the email, counted for a proof of the password
}

func (s *store) Get(context.Context, quire.ID) (*users.User, error) {
	s.reads++
	u := s.read.User
	return &u, nil
}

func (s *store) Stored(context.Context, quire.ID) (users.Stored, error) {
	s.reads++
	return s.read, nil
}

func (s *store) commit() error {
	s.committed++
	return s.commits[min(s.committed, len(s.commits))-1]
}

func (s *store) CommitDeposit(context.Context, users.Change, *idempotency.Record) error {
	return s.commit()
}
func (s *store) CommitRevision(context.Context, users.Revision) error { return s.commit() }

func (s *store) Reserve(context.Context, string, login.Guess) (login.Attempts, error) {
	s.guesses++
	return login.Attempts{Failures: 1}, nil
}

// passwords takes "right" for the stored hash "hash".
type passwords struct{}

func (passwords) Hash(pw string) string      { return "hash of " + pw }
func (passwords) Match(hash, pw string) bool { return hash == "hash" && pw == "right" }

// asRead is user 7 as stored a minute ago, active, with 10.00.
func asRead() users.Stored {
	now := time.Now()
	u := users.User{ID: 7, Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", Role: quire.RoleCustomer,
		Status: users.StatusActive, Balance: 10_00, CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Minute)}
	u.Hash = quire.ContentHash(&u)
	return users.Stored{User: u, PasswordHash: "hash"}
}

// request is a request for user 7 as the router hands it to a handler, of
// the caller.
func request(method, body string, caller access.Caller) *rest.Request {
	r := httptest.NewRequest(method, "/users/7", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.SetPathValue("id", "7")
	return &rest.Request{Request: r, Caller: caller, Version: 1, MediaType: rest.MediaTypeJSON}
}

var (
	admin = access.Caller{ID: 1, Role: quire.RoleAdmin}
	owner = access.Caller{ID: 7, Role: quire.RoleCustomer}
)

// A deposit reads, decides, renders and commits, and again after a stale
// read of the user; a user that keeps changing is ECONFLICT, and another
// part of the change found not as stored is an internal error at once.
func TestDepositReadsAgain(t *testing.T) {
	stale := &quire.Stale{What: users.StaleUser}
	for _, tc := range []struct {
		name    string
		commits []error
		code    string
		reads   int
	}{
		{"committed", []error{nil}, "", 1},
		{"read again after a stale read", []error{stale, stale, nil}, "", 3},
		{"a user that keeps changing", []error{stale}, quire.ECONFLICT, quire.MaxAttempts},
		{"a reservation not as stored", []error{&quire.Stale{What: users.StaleReservation}}, quire.EINTERNAL, 1},
		{"a dependency's failure", []error{quire.Errorf(quire.EUNAVAILABLE, "busy")}, quire.EUNAVAILABLE, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // the pauses between reads take no real time
				s := &store{read: asRead(), commits: tc.commits}
				h := &Users{Store: s, Passwords: passwords{}}
				err := h.deposit(httptest.NewRecorder(), request("POST", `{"amount": 5.00}`, admin))
				if quire.ErrorCode(err) != tc.code || s.reads != tc.reads || s.committed != tc.reads {
					t.Fatalf("deposit = %v after %d reads, %d commits; want %q after %d", err, s.reads, s.committed, tc.code, tc.reads)
				}
			})
		})
	}
}

// A change of one's own email or password is proved by the current
// password once, however often the user is read again; a wrong one
// commits nothing; an admin's change needs none; the email taken meanwhile
// and a user that keeps changing are said in the client's terms.
func TestReplaceProvesOnce(t *testing.T) {
	const moved = `{"email": "augusta@example.com", "first_name": "Ada", "last_name": "Lovelace"`
	const byAdmin = `, "role": "customer", "status": "ACTIVE"}` // an admin's PUT says both
	stale := &quire.Stale{What: users.StaleUser}
	for _, tc := range []struct {
		name      string
		body      string
		caller    access.Caller
		commits   []error
		code      string
		guesses   int
		committed int
	}{
		{"a name", `{"email": "ada@example.com", "first_name": "Augusta", "last_name": "Lovelace"}`, owner, []error{nil}, "", 0, 1},
		{"an email, proved", moved + `, "current_password": "right"}`, owner, []error{nil}, "", 1, 1},
		{"a password, proved", `{"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace", "password": "new password", "current_password": "right"}`, owner, []error{nil}, "", 1, 1},
		{"an email by an admin", moved + byAdmin, admin, []error{nil}, "", 0, 1},
		{"a wrong current password", moved + `, "current_password": "wrong"}`, owner, []error{nil}, quire.EWRONGPASSWORD, 1, 0},
		{"an email taken meanwhile", moved + byAdmin, admin, []error{&quire.Stale{What: users.StaleEmail}}, quire.EEMAILTAKEN, 0, 1},
		{"a user changed once", moved + `, "current_password": "right"}`, owner, []error{stale, nil}, "", 1, 2},
		{"a user that keeps changing", moved + byAdmin, admin, []error{stale}, quire.ECONFLICT, 0, quire.MaxAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &store{read: asRead(), commits: tc.commits}
				h := &Users{Store: s, Passwords: passwords{}}
				w := httptest.NewRecorder()
				err := h.replace(w, request("PUT", tc.body, tc.caller))
				if quire.ErrorCode(err) != tc.code || s.guesses != tc.guesses || s.committed != tc.committed {
					t.Fatalf("= %v (%s), %d guesses counted, %d commits; want %q, %d, %d",
						err, quire.ErrorCode(err), s.guesses, s.committed, tc.code, tc.guesses, tc.committed)
				}
				if tc.code == "" && (w.Code != http.StatusOK || w.Header().Get("ETag") == "") {
					t.Errorf("answered %d, ETag %q", w.Code, w.Header().Get("ETag"))
				}
			})
		})
	}
}
