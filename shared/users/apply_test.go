package users_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/users"
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
	}
}
