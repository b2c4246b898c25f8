package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// UserStore keeps users, their emails' reservations and failed logins. It
// implements users.Store and login.Accounts as dynamo.UserStore does.
type UserStore struct{ db *DB }

// Users returns the database's users.
func (db *DB) Users() *UserStore { return &UserStore{db} }

// CommitCreate stores ch's user with passwordHash and reserves its email,
// with ch's event and rec: a *quire.Stale naming users.StaleEmail when the
// email is taken (before users.StaleUser, for a taken id),
// idempotency.ErrRaced when rec's key has a record.
func (s *UserStore) CommitCreate(_ context.Context, ch users.Change, passwordHash string, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u := ch.User
	u.Hash = quire.ContentHash(&u)
	u.CreatedAt, u.UpdatedAt = stored(u.CreatedAt), stored(u.UpdatedAt)
	key := users.EmailKey(u.Email)
	var t tx
	t.add(users.StaleEmail, on("PutItem", routes.TableUsers), func() bool { return s.db.emails[key] == nil }, func() {
		s.db.emails[key] = &reservation{id: u.ID, role: users.LoginRole(u.Role, u.Status), password: passwordHash}
	})
	t.add(users.StaleUser, on("PutItem", routes.TableUsers), func() bool { return s.db.users[u.ID] == nil }, func() {
		s.db.users[u.ID] = &user{User: u, password: passwordHash}
	})
	t.publish(s.db, ch.Event)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("create user %d: %w", u.ID, err)
	}
	return nil
}

// Get returns the user id, or ENOTFOUND.
func (s *UserStore) Get(_ context.Context, id quire.ID) (*users.User, error) {
	if err := s.db.may(on("GetItem", routes.TableUsers)); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u, ok := s.db.users[id]
	if !ok {
		return nil, quire.NotFound("user " + id.String())
	}
	v := u.User
	return &v, nil
}

// Standing returns the account of the user id as it stands: ENOTFOUND
// when there is none.
func (s *UserStore) Standing(ctx context.Context, id quire.ID) (access.Account, error) {
	u, err := s.Get(ctx, id)
	if err != nil {
		return access.Account{}, err
	}
	return access.Account{Role: u.Role, Closed: u.Status != users.StatusActive}, nil
}

// List returns a page of users in id order: active ones, all with
// q.AnyStatus, or active ones of q.Role.
func (s *UserStore) List(_ context.Context, q users.ListQuery) ([]users.User, quire.ID, error) {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	var all []users.User
	for _, u := range s.db.users {
		active := u.Status == users.StatusActive
		switch {
		case q.Role != "" && (!active || u.Role != q.Role):
		case q.Role == "" && !q.AnyStatus && !active:
		default:
			all = append(all, u.User)
		}
	}
	slices.SortFunc(all, func(a, b users.User) int { return cmp.Compare(a.ID, b.ID) })
	us, next := page(all, func(u users.User) quire.ID { return u.ID }, q.After, q.Limit)
	if err := s.db.may(queried(routes.TableUsers)); err != nil {
		return nil, 0, err
	}
	if len(us) == 0 {
		return nil, next, nil
	}
	if err := s.db.may(on("BatchGetItem", routes.TableUsers)); err != nil { // the page's users
		return nil, 0, err
	}
	return us, next, nil
}

// Stored reads the user id with its password hash and session epoch:
// ENOTFOUND when there is none.
func (s *UserStore) Stored(_ context.Context, id quire.ID) (users.Stored, error) {
	if err := s.db.may(on("GetItem", routes.TableUsers)); err != nil {
		return users.Stored{}, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u, ok := s.db.users[id]
	if !ok {
		return users.Stored{}, quire.NotFound("user " + id.String())
	}
	return users.Stored{User: u.User, PasswordHash: u.password, Epoch: u.epoch}, nil
}

// CommitRevision writes rev over the user as read, as dynamo.UserStore
// does: a *quire.Stale naming users.StaleUser, users.StaleReservation or
// users.StaleEmail.
func (s *UserStore) CommitRevision(_ context.Context, rev users.Revision) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u := rev.User
	single := !rev.MovesEmail() && !rev.EndSessions && len(rev.Events) == 0
	if single && s.applied(u) {
		return s.db.may(on("UpdateItem", routes.TableUsers)) // the one UpdateItem, which finds its own write
	}
	var t tx
	t.add(users.StaleUser, on("UpdateItem", routes.TableUsers), s.asRead(u.ID, rev.ReadHash), func() {
		it := s.db.users[u.ID]
		it.Email, it.FirstName, it.LastName = u.Email, u.FirstName, u.LastName
		it.Role, it.Status, it.UpdatedAt, it.Hash = u.Role, u.Status, stored(u.UpdatedAt), u.Hash
		if rev.Password != "" {
			it.password = rev.Password
		}
		if rev.EndSessions {
			it.epoch++
		}
	})
	old, email := users.EmailKey(rev.OldEmail), users.EmailKey(u.Email)
	switch {
	case !rev.MovesEmail() && rev.EndSessions:
		t.add(users.StaleReservation, on("UpdateItem", routes.TableUsers), func() bool { return s.db.emails[old] != nil }, s.credentials(old, users.LoginRole(u.Role, u.Status), rev.Password))
	case rev.MovesEmail():
		t.add(users.StaleEmail, on("PutItem", routes.TableUsers), func() bool { return s.db.emails[email] == nil }, func() {
			s.db.emails[email] = &reservation{id: u.ID, role: users.LoginRole(u.Role, u.Status), password: rev.Carried.PasswordHash, epoch: rev.Carried.Epoch}
		})
		t.add("old email", on("DeleteItem", routes.TableUsers), nil, func() { delete(s.db.emails, old) })
	}
	if rev.Proved {
		t.add(login.StaleAttempts, on("DeleteItem", routes.TableSessions), nil, func() { delete(s.db.logins, old) })
	}
	for i := range rev.Events {
		t.publish(s.db, &rev.Events[i])
	}
	if err := s.db.commit(&t, nil); err != nil {
		return fmt.Errorf("replace user %d: %w", u.ID, err)
	}
	return nil
}

// asRead is the condition that the user id is stored with the content hash
// read.
func (s *UserStore) asRead(id quire.ID, read string) func() bool {
	return func() bool { u := s.db.users[id]; return u != nil && u.Hash == read }
}

// applied reports whether the user's item holds u already: a single-item
// write that finds it so succeeds, as a retry of a landed write does on
// DynamoDB.
func (s *UserStore) applied(u users.User) bool {
	it := s.db.users[u.ID]
	return it != nil && it.Hash == u.Hash
}

// credentials is the change of the reservation of the email key that a
// write ending the user's sessions makes: its role, its password hash when
// passwordHash is set, one more session epoch.
func (s *UserStore) credentials(key string, role quire.Role, passwordHash string) func() {
	return func() {
		r := s.db.emails[key]
		r.role = role
		if passwordHash != "" {
			r.password = passwordHash
		}
		r.epoch++
	}
}

// CommitProfile writes the profile ch changes over the user as read: a
// *quire.Stale naming users.StaleUser when it is not. It keeps no record.
func (s *UserStore) CommitProfile(_ context.Context, ch users.Change, _ *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u := ch.User
	if ch.Event == nil && s.applied(u) {
		return s.db.may(on("UpdateItem", routes.TableUsers)) // the one UpdateItem, which finds its own write
	}
	var t tx
	t.add(users.StaleUser, on("UpdateItem", routes.TableUsers), s.asRead(u.ID, ch.ReadHash), func() {
		it := s.db.users[u.ID]
		it.Profile, it.UpdatedAt, it.Hash = u.Profile, stored(u.UpdatedAt), u.Hash
	})
	t.publish(s.db, ch.Event)
	if err := s.db.commit(&t, nil); err != nil {
		return fmt.Errorf("update user %d: %w", u.ID, err)
	}
	return nil
}

// CommitDeposit writes the deposit ch with rec over the user as read: a
// *quire.Stale naming users.StaleUser, idempotency.ErrRaced.
func (s *UserStore) CommitDeposit(_ context.Context, ch users.Change, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u := ch.User
	var t tx
	t.add(users.StaleUser, on("UpdateItem", routes.TableUsers), s.asRead(u.ID, ch.ReadHash), func() {
		it := s.db.users[u.ID]
		it.Balance, it.UpdatedAt, it.Hash = u.Balance, stored(u.UpdatedAt), u.Hash
	})
	t.publish(s.db, ch.Event)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("deposit into user %d: %w", u.ID, err)
	}
	return nil
}

// CommitClose writes the closing ch with rec as CommitDeposit does, and
// moves the session epoch of the user and of its email's reservation on: a
// *quire.Stale naming users.StaleReservation when that is gone.
func (s *UserStore) CommitClose(_ context.Context, ch users.Change, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	u := ch.User
	key := users.EmailKey(u.Email)
	var t tx
	t.add(users.StaleUser, on("UpdateItem", routes.TableUsers), s.asRead(u.ID, ch.ReadHash), func() {
		it := s.db.users[u.ID]
		it.Status, it.UpdatedAt, it.Hash = u.Status, stored(u.UpdatedAt), u.Hash
		it.epoch++
	})
	t.add(users.StaleReservation, on("UpdateItem", routes.TableUsers), func() bool { return s.db.emails[key] != nil }, s.credentials(key, users.LoginRole(u.Role, u.Status), ""))
	t.publish(s.db, ch.Event)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("close user %d: %w", u.ID, err)
	}
	return nil
}

// maxSessionDeletes is how many sessions a deletion ends in its
// transaction, as in package dynamo.
const maxSessionDeletes = 90

// Sessions lists the ids of the user's sessions in id order, up to
// maxSessionDeletes, and whether there may be more: as a DynamoDB Query
// with a limit, true when the limit is reached.
func (s *UserStore) Sessions(_ context.Context, id quire.ID) ([]string, bool, error) {
	if err := s.db.may(on("Query", routes.TableSessions)); err != nil {
		return nil, false, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.db.sessions[id]))
	if len(ids) >= maxSessionDeletes {
		return ids[:maxSessionDeletes], true, nil
	}
	return ids, false, nil
}

// CommitDelete removes d's user, over the user as read, with its email's
// reservation and failed logins, its cart and d's sessions, and then, when
// d says there are more, its other sessions: a *quire.Stale naming
// users.StaleUser.
func (s *UserStore) CommitDelete(_ context.Context, d users.Deletion) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	id, key := d.User.ID, users.EmailKey(d.User.Email)
	var t tx
	t.add(users.StaleUser, on("DeleteItem", routes.TableUsers), s.asRead(id, d.User.Hash), func() { delete(s.db.users, id) })
	t.add("reservation", on("DeleteItem", routes.TableUsers), nil, func() { delete(s.db.emails, key) })
	t.add("failed logins", on("DeleteItem", routes.TableSessions), nil, func() { delete(s.db.logins, key) })
	t.add("cart", on("DeleteItem", routes.TableCarts), nil, func() { delete(s.db.carts, id) })
	for _, sid := range d.Sessions {
		t.add("session", on("DeleteItem", routes.TableSessions), nil, func() { delete(s.db.sessions[id], sid) })
	}
	t.publish(s.db, d.Event)
	if err := s.db.commit(&t, nil); err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	if d.More {
		// A Query of the rest, and a BatchWriteItem of each page found.
		accesses := []dynamo.Access{on("Query", routes.TableSessions)}
		if len(s.db.sessions[id]) > 0 {
			accesses = append(accesses, on("BatchWriteItem", routes.TableSessions))
		}
		if err := s.db.may(accesses...); err != nil {
			return nil // the user is deleted: its sessions are left to expire, as package dynamo leaves them
		}
		delete(s.db.sessions, id)
	}
	return nil
}

// Account returns the account of email, as its reservation carries it:
// ENOTFOUND when no user has the email.
func (s *UserStore) Account(_ context.Context, email string) (login.Account, error) {
	if err := s.db.may(on("GetItem", routes.TableUsers)); err != nil {
		return login.Account{}, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	r, ok := s.db.emails[users.EmailKey(email)]
	if !ok {
		return login.Account{}, quire.NotFound("an email's account")
	}
	return login.Account{ID: r.id, Role: r.role, PasswordHash: r.password, Epoch: r.epoch}, nil
}

// Reserve counts a guess of email as g says, in whole seconds as DynamoDB
// keeps the window: a new window when g.Restart and the stored one has
// ended (or there is none), else one more guess in a live window below
// g.Limit (or a new window when there is none). With nothing counted, it
// returns the count as stored and a *quire.Stale naming login.StaleAttempts.
func (s *UserStore) Reserve(_ context.Context, email string, g login.Guess) (login.Attempts, error) {
	write := "UpdateItem" // one more guess
	if g.Restart {
		write = "PutItem" // a new window
	}
	if err := s.db.may(on(write, routes.TableSessions)); err != nil {
		return login.Attempts{}, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	key := users.EmailKey(email)
	now, until := g.Now.Unix(), g.Until.Unix()
	c, ok := s.db.logins[key]
	switch {
	case g.Restart && (!ok || c.expires <= now):
		c = &guesses{failures: 1, expires: until}
	case !g.Restart && !ok:
		c = &guesses{failures: 1, expires: until}
	case !g.Restart && c.expires > now && c.failures < g.Limit:
		c = &guesses{failures: c.failures + 1, expires: c.expires}
	default:
		return c.attempts(), &quire.Stale{What: login.StaleAttempts}
	}
	s.db.logins[key] = c
	return c.attempts(), nil
}

func (c *guesses) attempts() login.Attempts {
	return login.Attempts{Failures: c.failures, Until: time.Unix(c.expires, 0)}
}
