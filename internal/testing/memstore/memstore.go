// Package memstore keeps Quire's data in memory: every store interface the
// domain packages declare (users.Store, login.Accounts and login.Sessions,
// cache.CatalogSource, carts.Store, orders.Store, config.Store,
// idempotency.Store and health.Pinger), with the semantics Quire relies on
// from package dynamo: conditional writes, transactions that commit whole or
// not at all and name the item that was not as read (the same *quire.Stale
// names, idempotency.ErrRaced), idempotency records, the
// outbox of events written with their changes, and pages in the order and
// with the cursors DynamoDB gives.
//
// It is for tests, as golang/pkgsite's fakedatasource is: the handlers and
// the read-decide-commit functions run on it with no DynamoDB, and package
// storetest holds it and the DynamoDB store to one behaviour. No function
// links it.
//
// A DB is one database: its stores, like package dynamo's stores on one
// set of tables, see each other's writes. Its methods are safe for
// concurrent use; a transaction holds the DB's one lock, so transactions
// never conflict, as on DynamoDB Local.
package memstore

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/smithy-go"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// DB is an in-memory database holding what Quire's tables hold, or a view
// of one held to a function's grants (see As).
type DB struct {
	*data
	role *role // nil: every access is allowed
}

// data is what a database holds, shared by its views.
type data struct {
	mu  sync.Mutex
	now func() time.Time
	ttl time.Duration

	users    map[quire.ID]*user
	emails   map[string]*reservation // by users.EmailKey
	logins   map[string]*guesses     // by users.EmailKey
	sessions map[quire.ID]map[string]login.Session
	carts    map[quire.ID]*carts.Cart // Revision and Hash as stored
	orders   map[quire.ID]map[quire.ID]orders.Order
	authors  map[quire.ID]catalog.Author
	products map[quire.ID]*product
	config   *document
	records  map[string]idempotency.Record
	events   []quire.Event // the outbox, in the order of commits
}

// user is a user's item: the user, its password hash and session epoch.
type user struct {
	users.User
	password string
	epoch    int64
}

// reservation is an email's reservation: what login reads of its user.
type reservation struct {
	id       quire.ID
	role     quire.Role
	password string
	epoch    int64
}

// guesses are the guesses counted against an email, as DynamoDB keeps them:
// the window's end in Unix seconds.
type guesses struct {
	failures int
	expires  int64
}

// product is a product's item: the product and its rank among the featured
// books (0: not featured).
type product struct {
	catalog.Product
	rank int
}

// document is the configuration document: its head and its compressed
// bytes, of the head's generation.
type document struct {
	head config.Head
	gzip []byte
}

// New returns an empty database whose idempotency records live for ttl
// (idempotency.DefaultTTL when ttl is 0).
func New(ttl time.Duration) *DB {
	if ttl <= 0 {
		ttl = idempotency.DefaultTTL
	}
	return &DB{data: &data{
		now: time.Now, ttl: ttl,
		users: map[quire.ID]*user{}, emails: map[string]*reservation{}, logins: map[string]*guesses{},
		sessions: map[quire.ID]map[string]login.Session{}, carts: map[quire.ID]*carts.Cart{},
		orders: map[quire.ID]map[quire.ID]orders.Order{}, authors: map[quire.ID]catalog.Author{},
		products: map[quire.ID]*product{}, records: map[string]idempotency.Record{},
	}}
}

// role is the grants a view of a database is held to.
type role struct {
	group routes.Group
	sent  func(dynamo.Access)
}

// As returns a view of db, on the same data, held to g's grants as IAM
// holds g's function and dynamo.Enforce its client outside AWS: a method
// that sends, in package dynamo's store, an action g does not allow fails
// as it fails there, with AccessDeniedException naming the action and the
// table, and changes nothing. sent, when not nil, is told each access
// allowed: what the function sends.
func (db *DB) As(g routes.Group, sent func(dynamo.Access)) *DB {
	return &DB{data: db.data, role: &role{group: g, sent: sent}}
}

// may returns the error of the first of the accesses db's role does not
// allow, and nil when it allows them all. Every method asks it first for
// the accesses package dynamo's store sends for the same call (the tests
// hold the two to one list).
func (db *DB) may(accesses ...dynamo.Access) error {
	if db.role == nil {
		return nil
	}
	for _, a := range accesses {
		if !db.role.group.Allows(a.Action, a.Table, a.Index != "") {
			return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: dynamo.Denial(db.role.group.Name, "us-east-1", a), Fault: smithy.FaultClient}
		}
	}
	if db.role.sent != nil {
		for _, a := range accesses {
			db.role.sent(a)
		}
	}
	return nil
}

// on is the access of DynamoDB's action (GetItem...) on the table named
// table; queried a Query of one of its indexes.
func on(action, table string) dynamo.Access {
	return dynamo.Access{Action: "dynamodb:" + action, Table: table}
}

func queried(table string) dynamo.Access {
	return dynamo.Access{Action: routes.QueryAction, Table: table, Index: "index"}
}

// tx is a transaction of named steps: each commits only when every step's
// condition holds, checked before any step is applied, as DynamoDB's
// TransactWriteItems does.
type tx struct {
	steps []step
}

type step struct {
	name   string
	access dynamo.Access // what the step is in package dynamo's transaction
	ok     func() bool   // the condition; nil for none
	do     func()
}

func (t *tx) add(name string, access dynamo.Access, ok func() bool, do func()) {
	t.steps = append(t.steps, step{name, access, ok, do})
}

// publish adds ev, when set, to the outbox with t's other steps, as
// package dynamo's transactions do: under an id no event has.
func (t *tx) publish(db *DB, ev *quire.Event) {
	if ev == nil {
		return
	}
	e := *ev
	e.Time = stored(e.Time)
	t.add("event", on("PutItem", routes.TableEvents), func() bool {
		return !slices.ContainsFunc(db.events, func(o quire.Event) bool { return o.ID == e.ID })
	}, func() { db.events = append(db.events, e) })
}

// Events returns the events the outbox holds, in the order of their time,
// then id, as package dynamo's EventStore.Events does.
func (db *DB) Events(context.Context) ([]quire.Event, error) {
	if err := db.may(on("Scan", routes.TableEvents)); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	out := slices.Clone(db.events)
	slices.SortFunc(out, quire.CompareEvents)
	return out, nil
}

// commit runs t with rec's record, holding db's lock, and reports what
// package dynamo's transactions report: idempotency.ErrRaced when rec's
// scope has a live record,
// else a *quire.Stale naming the first step whose condition failed.
func (db *DB) commit(t *tx, rec *idempotency.Record) error {
	var accesses []dynamo.Access
	for _, s := range t.steps {
		accesses = append(accesses, s.access)
	}
	if rec != nil {
		accesses = append(accesses, on("PutItem", routes.TableIdempotency))
	}
	if err := db.may(accesses...); err != nil {
		return err
	}
	now := db.now()
	if rec != nil {
		if old, ok := db.records[rec.Scope]; ok && old.Expires.Unix() > now.Unix() {
			return idempotency.ErrRaced
		}
	}
	for _, s := range t.steps {
		if s.ok != nil && !s.ok() {
			return &quire.Stale{What: s.name}
		}
	}
	for _, s := range t.steps {
		s.do()
	}
	if rec != nil {
		db.records[rec.Scope] = recorded(rec)
	}
	return nil
}

// recordedHeaders are the response headers a record keeps: those a replay
// must send again (as package dynamo keeps them).
var recordedHeaders = []string{"Content-Type", "Location", "Link", "Cache-Control"}

// recorded is rec as the records table keeps it: its recorded headers, its
// expiry in whole seconds.
func recorded(rec *idempotency.Record) idempotency.Record {
	header := http.Header{}
	for _, name := range recordedHeaders {
		if v := http.Header(rec.Header).Get(name); v != "" {
			header.Set(name, v)
		}
	}
	r := idempotency.Record{
		Scope: rec.Scope, Fingerprint: rec.Fingerprint, Expires: time.Unix(rec.Expires.Unix(), 0),
		Response: idempotency.Response{Status: rec.Status, Header: header},
	}
	if len(rec.Body) > 0 {
		r.Body = slices.Clone(rec.Body)
	}
	return r
}

// stored returns t as DynamoDB gives it back: written as RFC 3339 with
// nanoseconds and read again.
func stored(t time.Time) time.Time {
	s, err := time.Parse(time.RFC3339Nano, t.Format(time.RFC3339Nano))
	if err != nil {
		panic(fmt.Sprintf("memstore: time %v: %v", t, err))
	}
	return s
}

// page returns the page of up to limit of all (in id order) after the id
// after, and the id the next page starts after, or 0, as package dynamo's
// queryPage does.
func page[T any](all []T, id func(T) quire.ID, after quire.ID, limit int) ([]T, quire.ID) {
	out := make([]T, 0, limit)
	for _, v := range all {
		if id(v) <= after {
			continue
		}
		if len(out) == limit {
			return out, id(out[len(out)-1])
		}
		out = append(out, v)
	}
	return out, 0
}

// RecordStore keeps idempotency records. It implements idempotency.Store.
type RecordStore struct{ db *DB }

// Records returns the database's idempotency records.
func (db *DB) Records() *RecordStore { return &RecordStore{db} }

// Get returns the record of scope, or nil when there is none or it has
// expired. It returns no error.
func (s *RecordStore) Get(_ context.Context, scope string) (*idempotency.Record, error) {
	if err := s.db.may(on("GetItem", routes.TableIdempotency)); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	r, ok := s.db.records[scope]
	if !ok || !r.Expires.After(s.db.now()) {
		return nil, nil
	}
	r.Header = http.Header(r.Header).Clone()
	r.Body = slices.Clone(r.Body)
	return &r, nil
}

// Begin returns the pending record of scope, expiring after the database's
// time to live.
func (s *RecordStore) Begin(scope, fingerprint string) *idempotency.Pending {
	return &idempotency.Pending{Scope: scope, Fingerprint: fingerprint, Expires: s.db.now().Add(s.db.ttl)}
}

// Pinger answers health checks. It implements health.Pinger.
type Pinger struct{ db *DB }

// Pinger returns the database's health check.
func (db *DB) Pinger() *Pinger { return &Pinger{db} }

// Ping returns ctx's error: the database always answers.
func (p *Pinger) Ping(ctx context.Context) error {
	if err := p.db.may(on("GetItem", routes.TableUsers)); err != nil {
		return err
	}
	return ctx.Err()
}
