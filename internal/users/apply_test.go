package users_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
)

// store is a users.Store whose reads and commits a test scripts; its other
// methods are not called.
type store struct {
	users.Store
	reads   int
	commits []error // what each commit returns, the last repeating
	got     []*idempotency.Record
}

func (s *store) Get(context.Context, quire.ID) (*users.User, error) {
	s.reads++
	u := asRead(10_00, users.StatusActive, time.Now().Add(-time.Minute))
	return &u, nil
}

func (s *store) CommitDeposit(_ context.Context, _ users.Change, rec *idempotency.Record) error {
	s.got = append(s.got, rec)
	return s.commits[min(len(s.got), len(s.commits))-1]
}

// Apply reads, decides and commits, and again after a stale read of the
// user, each time with the record of the answer it decided; a user that
// keeps changing is ECONFLICT, and another part of the change found not
// as stored is an internal error at once.
func TestApply(t *testing.T) {
	credit := func(u users.User, now time.Time) (users.Change, error) { return users.Credit(u, 5_00, now) }
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
				s := &store{commits: tc.commits}
				answered := 0
				ch, err := users.Apply(t.Context(), s, 7, credit, s.CommitDeposit, func(ch users.Change) (*idempotency.Record, error) {
					answered++
					return &idempotency.Record{Scope: "key", Response: idempotency.Response{Status: 200}}, nil
				})
				if quire.ErrorCode(err) != tc.code || s.reads != tc.reads || answered != tc.reads || len(s.got) != tc.reads {
					t.Fatalf("Apply = %v after %d reads, %d answers, %d commits; want %q after %d", err, s.reads, answered, len(s.got), tc.code, tc.reads)
				}
				if _, ok := errors.AsType[*quire.Stale](err); ok {
					t.Errorf("Apply returned the stale read itself: %v", err)
				}
				if tc.code == "" && (ch.User.Balance != 15_00 || s.got[len(s.got)-1] == nil) {
					t.Errorf("change %+v committed with record %v", ch, s.got)
				}
			})
		})
	}
}

// revisions is a users.Store for Replace: it reads the user as read, and
// each commit returns the next of commits, the last repeating, recording
// the revision.
type revisions struct {
	users.Store
	read      users.Stored
	commits   []error
	committed []users.Revision
}

func (s *revisions) Stored(context.Context, quire.ID) (users.Stored, error) { return s.read, nil }

func (s *revisions) CommitRevision(_ context.Context, rev users.Revision) error {
	s.committed = append(s.committed, rev)
	return s.commits[min(len(s.committed), len(s.commits))-1]
}

// Replace asks for the current password only when the caller changes the
// email or the password of their own account, refuses what the proof or
// the precondition refuses with nothing committed, reads again after a
// stale read of the user, and says in the domain's words what a commit
// found: the email taken by another user, a user that keeps changing.
func TestReplace(t *testing.T) {
	read := users.Stored{User: asRead(10_00, users.StatusActive, time.Now().Add(-time.Minute)), PasswordHash: "hash"}
	renamed, moved := read.User, read.User
	renamed.FirstName = "Augusta"
	moved.Email = "augusta@example.com"
	wrong := quire.Errorf(quire.EWRONGPASSWORD, "The current password is wrong; nothing was changed.")
	for _, tc := range []struct {
		name      string
		u         users.User
		password  string
		own       bool // the caller's own account: Replace gets a proof
		proof     error
		pre       quire.Precondition
		commits   []error
		code      string
		proved    int // how often the proof was asked for
		committed int
	}{
		{name: "a name", u: renamed, own: true, commits: []error{nil}, committed: 1},
		{name: "an email, proved", u: moved, own: true, commits: []error{nil}, proved: 1, committed: 1},
		{name: "a password, proved", u: renamed, password: "new", own: true, commits: []error{nil}, proved: 1, committed: 1},
		{name: "an email by an admin", u: moved, commits: []error{nil}, committed: 1},
		{name: "a wrong current password", u: moved, own: true, proof: wrong, code: quire.EWRONGPASSWORD, proved: 1},
		{name: "a stale ETag", u: renamed, pre: quire.Precondition{Match: []string{"other"}}, code: quire.EPRECONDITION},
		{name: "an email taken meanwhile", u: moved, commits: []error{&quire.Stale{What: users.StaleEmail}}, code: quire.EEMAILTAKEN, committed: 1},
		{name: "a user changed once", u: moved, own: true, commits: []error{&quire.Stale{What: users.StaleUser}, nil}, proved: 1, committed: 2},
		{name: "a user that keeps changing", u: renamed, commits: []error{&quire.Stale{What: users.StaleUser}}, code: quire.ECONFLICT, committed: quire.MaxAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // the pauses between reads take no real time
				s := &revisions{read: read, commits: tc.commits}
				proved := 0
				var prove func(users.Credentials) error
				if tc.own {
					prove = func(c users.Credentials) error {
						proved++
						if c != (users.Credentials{Email: read.User.Email, PasswordHash: read.PasswordHash}) {
							t.Errorf("proof asked of %+v, want the stored credentials", c)
						}
						return tc.proof
					}
				}
				var hash func() string
				if tc.password != "" {
					hash = func() string { return "new-hash" }
				}
				got, err := users.Replace(t.Context(), s, 0, tc.u, hash, tc.pre, prove)
				if quire.ErrorCode(err) != tc.code || proved != tc.proved || len(s.committed) != tc.committed {
					t.Fatalf("= %v (%s), proof asked %d times, %d commits; want %q, %d, %d", err, quire.ErrorCode(err), proved, len(s.committed), tc.code, tc.proved, tc.committed)
				}
				if tc.code == "" && (got.Email != tc.u.Email || got.FirstName != tc.u.FirstName || s.committed[len(s.committed)-1].Proved != (tc.proved > 0)) {
					t.Errorf("stored %+v (proved %v), want %+v", got, s.committed[len(s.committed)-1].Proved, tc.u)
				}
			})
		})
	}
}
