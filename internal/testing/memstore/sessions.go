package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// SessionStore keeps login sessions under their user. It implements
// login.Sessions as dynamo.SessionStore does.
type SessionStore struct{ db *DB }

// Sessions returns the database's sessions.
func (db *DB) Sessions() *SessionStore { return &SessionStore{db} }

// Start stores s, which must be new (else a *quire.Stale naming
// login.StaleSession), and forgets the guesses counted against email, both
// or neither.
func (st *SessionStore) Start(_ context.Context, s login.Session, email string) error {
	st.db.mu.Lock()
	defer st.db.mu.Unlock()
	key := users.EmailKey(email)
	s.Started, s.IdleUntil, s.Ends = stored(s.Started.UTC()), stored(s.IdleUntil.UTC()), stored(s.Ends.UTC())
	var t tx
	t.add(login.StaleSession, on("PutItem", routes.TableSessions), func() bool { _, ok := st.db.sessions[s.UserID][s.ID]; return !ok }, func() {
		if st.db.sessions[s.UserID] == nil {
			st.db.sessions[s.UserID] = map[string]login.Session{}
		}
		st.db.sessions[s.UserID][s.ID] = s
	})
	t.add(login.StaleAttempts, on("DeleteItem", routes.TableSessions), nil, func() { delete(st.db.logins, key) })
	if err := st.db.commit(&t, nil); err != nil {
		return fmt.Errorf("start a session of user %d: %w", s.UserID, err)
	}
	return nil
}

// Resume returns the session id of user and the user's role and session
// epoch: ENOTFOUND when either is missing.
func (st *SessionStore) Resume(_ context.Context, user quire.ID, id string) (login.Session, login.Account, error) {
	// One BatchGetItem of the session and of the user.
	if err := st.db.may(on("BatchGetItem", routes.TableSessions), on("BatchGetItem", routes.TableUsers)); err != nil {
		return login.Session{}, login.Account{}, err
	}
	st.db.mu.Lock()
	defer st.db.mu.Unlock()
	s, ok := st.db.sessions[user][id]
	u := st.db.users[user]
	if !ok || u == nil {
		return login.Session{}, login.Account{}, quire.NotFound("session of user " + user.String())
	}
	return s, login.Account{ID: user, Role: users.LoginRole(u.Role, u.Status), Epoch: u.epoch}, nil
}

// Rotate puts next in place of s's token hash and moves its idle expiry to
// idleUntil, if the hash is still s's: a *quire.Stale naming
// login.StaleSession when another request rotated it first (unless the
// session holds next already), ENOTFOUND when the session is gone.
func (st *SessionStore) Rotate(_ context.Context, s login.Session, next string, idleUntil time.Time) error {
	if err := st.db.may(on("UpdateItem", routes.TableSessions)); err != nil {
		return err
	}
	st.db.mu.Lock()
	defer st.db.mu.Unlock()
	cur, ok := st.db.sessions[s.UserID][s.ID]
	switch {
	case !ok:
		return quire.NotFound("session of user " + s.UserID.String())
	case cur.TokenHash == next:
		return nil
	case cur.TokenHash != s.TokenHash:
		return &quire.Stale{What: login.StaleSession}
	}
	cur.TokenHash, cur.IdleUntil = next, stored(idleUntil.UTC())
	st.db.sessions[s.UserID][s.ID] = cur
	return nil
}

// End deletes the session id of user: ENOTFOUND if there is none.
func (st *SessionStore) End(_ context.Context, user quire.ID, id string) error {
	if err := st.db.may(on("DeleteItem", routes.TableSessions)); err != nil {
		return err
	}
	st.db.mu.Lock()
	defer st.db.mu.Unlock()
	if _, ok := st.db.sessions[user][id]; !ok {
		return quire.NotFound("session of user " + user.String())
	}
	delete(st.db.sessions[user], id)
	return nil
}
