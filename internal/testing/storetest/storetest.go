// Package storetest is the one behavioural suite of Quire's stores: Run
// holds a set of stores to what the domain packages rely on (conditional
// writes, transactions that fail as a whole and name the item that was not
// as read, idempotency records, callers' accounts, the guesses of a
// password, sessions, pages in id order with their cursors). Package
// dynamo runs it on DynamoDB Local and package memstore in memory, which
// keeps the in-memory store as DynamoDB behaves.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/memstore"
	"github.com/quireapi/quire/internal/users"
)

// Stores are the stores of one database, as the functions use them, with
// the writes of demo data.
type Stores struct {
	Users interface {
		users.Store
		login.Accounts
		access.Accounts
	}
	Sessions login.Sessions
	Catalog  interface {
		cache.CatalogSource
		demo.Catalog
	}
	Carts  carts.Store
	Orders interface {
		orders.Store
		demo.Orders
	}
	Config  config.Store
	Records idempotency.Store
	// Events reads the outbox: the events written with their changes.
	Events interface {
		Events(context.Context) ([]quire.Event, error)
	}
}

// DynamoDB returns package dynamo's stores on db and the tables names names.
func DynamoDB(db *dynamodb.Client, names dynamo.TableNames) Stores {
	u := dynamo.NewUserStore(db, names)
	return Stores{
		Users: u, Sessions: dynamo.NewSessionStore(db, names), Catalog: dynamo.NewCatalogStore(db, names),
		Carts: dynamo.NewCartStore(db, names), Orders: dynamo.NewOrderStore(db, names),
		Config: dynamo.NewConfigStore(db, names), Records: dynamo.NewRecordStore(db, names, 0),
		Events: dynamo.NewEventStore(db, names),
	}
}

// Memory returns the stores of the in-memory database db.
func Memory(db *memstore.DB) Stores {
	return Stores{
		Users: db.Users(), Sessions: db.Sessions(), Catalog: db.Catalog(), Carts: db.Carts(),
		Orders: db.Orders(), Config: db.Config(), Records: db.Records(), Events: db,
	}
}

// Run runs the suite, each test on stores of a fresh, empty database that
// open returns (it may skip the test).
func Run(t *testing.T, open func(testing.TB) Stores) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open(t))
		})
	}
}

// cases are the suite's tests.
var cases = []struct {
	name string
	test func(*testing.T, Stores)
}{
	{"ConditionalCreate", testConditionalCreate},
	{"StaleWritesChangeNothing", testStaleWrites},
	{"Standing", testStanding},
	{"IdempotencyRecords", testRecords},
	{"PaymentIsWhole", testPayment},
	{"Carts", testCarts},
	{"Catalog", testCatalog},
	{"Configuration", testConfig},
	{"UserPages", testUserPages},
	{"CatalogPages", testCatalogPages},
	{"OrderPages", testOrderPages},
	{"Guesses", testGuesses},
	{"Sessions", testSessions},
	{"Revision", testRevision},
	{"Epochs", testEpochs},
	{"Deletion", testDeletion},
}

// now is the suite's clock, in milliseconds as Quire's writes keep it.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// user stores a new active user id with role and password hash "hash-<id>",
// without its event (the suite's outbox holds the events it checks), and
// returns it as stored.
func user(t *testing.T, s Stores, id quire.ID, role quire.Role) users.User {
	t.Helper()
	u := users.Change{User: users.Signed(users.User{ID: id, Email: fmt.Sprintf("User-%d@Quire.example", id), FirstName: "Test", LastName: "User",
		Role: role, Status: users.StatusActive}, now()).User}
	if err := s.Users.CommitCreate(t.Context(), u, fmt.Sprintf("hash-%d", id), nil); err != nil {
		t.Fatalf("create user %d: %v", id, err)
	}
	got, err := s.Users.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return *got
}

// wantStale fails the test unless err is a *quire.Stale naming what.
func wantStale(t *testing.T, err error, what string) {
	t.Helper()
	if s, ok := errors.AsType[*quire.Stale](err); !ok || s.What != what {
		t.Errorf("got %v, want a stale read of the %s", err, what)
	}
}

// wantCode fails the test unless err has code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := quire.ErrorCode(err); got != code {
		t.Errorf("got %v (code %q), want code %q", err, got, code)
	}
}

// same fails the test when got and want differ, saying what.
func same(t *testing.T, what string, got, want any, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// wantEvents fails the test unless the outbox holds exactly want, as they
// were decided (their times to the millisecond), in any order: the order
// of a stream's events is only that of each item's own changes.
func wantEvents(t *testing.T, s Stores, want ...quire.Event) {
	t.Helper()
	got, err := s.Events.Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byID := func(a, b quire.Event) int { return strings.Compare(a.ID, b.ID) }
	got, want = append([]quire.Event{}, got...), append([]quire.Event{}, want...)
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	same(t, "the outbox", got, want, cmp.Comparer(time.Time.Equal), cmp.Comparer(func(a, b json.RawMessage) bool {
		var x, y any
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
	}))
}

// credit is the deposit of amount into u.
func credit(t *testing.T, u users.User, amount quire.Money) users.Change {
	t.Helper()
	ch, err := users.Credit(u, amount, now())
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func testConditionalCreate(t *testing.T, s Stores) {
	ada := user(t, s, 1, quire.RoleAdmin)
	if ada.Hash != quire.ContentHash(&ada) || ada.Email != "User-1@Quire.example" {
		t.Errorf("stored %+v, want its content hash and its email as written", ada)
	}
	taken := users.Signed(users.User{ID: 2, Email: "user-1@quire.EXAMPLE", FirstName: "B", Role: quire.RoleCustomer, Status: users.StatusActive}, now())
	wantStale(t, s.Users.CommitCreate(t.Context(), taken, "", nil), users.StaleEmail)
	twin := users.Signed(users.User{ID: 1, Email: "other@quire.example", FirstName: "B", Role: quire.RoleCustomer, Status: users.StatusActive}, now())
	wantStale(t, s.Users.CommitCreate(t.Context(), twin, "", nil), users.StaleUser)
	if _, err := s.Users.Get(t.Context(), 2); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("user 2 after a refused create: %v, want ENOTFOUND", err)
	}
	if _, err := s.Users.Account(t.Context(), "other@quire.example"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the email of a refused create is reserved: %v", err)
	}
	acct, err := s.Users.Account(t.Context(), "USER-1@quire.example")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "account of an email in another case", acct, login.Account{ID: 1, Role: quire.RoleAdmin, PasswordHash: "hash-1"})
	st, err := s.Users.Stored(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "stored user", st, users.Stored{User: ada, PasswordHash: "hash-1"})
	_, err = s.Users.Stored(t.Context(), 9)
	wantCode(t, err, quire.ENOTFOUND)
}

func testStaleWrites(t *testing.T, s Stores) {
	u := user(t, s, 2, quire.RoleCustomer)
	first := credit(t, u, 10_00)
	if err := s.Users.CommitDeposit(t.Context(), first, nil); err != nil {
		t.Fatal(err)
	}
	// A second deposit decided on the same read finds the user changed.
	wantStale(t, s.Users.CommitDeposit(t.Context(), credit(t, u, 5_00), nil), users.StaleUser)
	closing, err := users.CloseAccount(u, now())
	if err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Users.CommitClose(t.Context(), closing, nil), users.StaleUser)
	p := u
	p.Profile.Bio = "Reads."
	p.Hash = quire.ContentHash(&p)
	wantStale(t, s.Users.CommitProfile(t.Context(), users.Change{User: p, ReadHash: u.Hash}, nil), users.StaleUser)
	got, err := s.Users.Get(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "user after stale writes", *got, first.User)
}

// testStanding: a caller's account as it stands, which every protected
// request reads: its role, closed or not, and ENOTFOUND once it is gone.
func testStanding(t *testing.T, s Stores) {
	user(t, s, 1, quire.RoleAdmin)
	u := user(t, s, 2, quire.RoleCustomer)
	closing, err := users.CloseAccount(user(t, s, 3, quire.RoleAdmin), now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Users.CommitClose(t.Context(), closing, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Users.CommitDelete(t.Context(), users.Deletion{User: u}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[quire.ID]access.Account{1: {Role: quire.RoleAdmin}, 3: {Role: quire.RoleAdmin, Closed: true}} {
		got, err := s.Users.Standing(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("standing of user %d", id), got, want)
	}
	for _, id := range []quire.ID{2, 9} {
		_, err := s.Users.Standing(t.Context(), id)
		wantCode(t, err, quire.ENOTFOUND)
	}
}

// record is the record of a request with scope that status answered.
func record(scope string, status int) *idempotency.Record {
	return &idempotency.Record{
		Scope: scope, Fingerprint: "fp-" + scope, Expires: now().Add(time.Hour),
		Response: idempotency.Response{Status: status, Header: http.Header{
			"Content-Type": {"application/json"}, "Location": {"/users/2"}, "X-Other": {"dropped"},
		}, Body: []byte(`{"id":2}`)},
	}
}

func testRecords(t *testing.T, s Stores) {
	if got, err := s.Records.Get(t.Context(), "none"); got != nil || err != nil {
		t.Errorf("record of an unknown scope: %+v, %v", got, err)
	}
	u := user(t, s, 2, quire.RoleCustomer)
	rec := record("POST /users/2/deposit key", 200)
	if err := s.Users.CommitDeposit(t.Context(), credit(t, u, 10_00), rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Records.Get(t.Context(), rec.Scope)
	if err != nil {
		t.Fatal(err)
	}
	want := *rec
	want.Expires = time.Unix(rec.Expires.Unix(), 0)
	want.Header = http.Header{"Content-Type": {"application/json"}, "Location": {"/users/2"}}
	same(t, "record", got, &want, cmp.Comparer(time.Time.Equal))
	// Another request with the key, decided on a fresh read, races.
	u2, _ := s.Users.Get(t.Context(), 2)
	err = s.Users.CommitDeposit(t.Context(), credit(t, *u2, 10_00), record(rec.Scope, 200))
	if !errors.Is(err, idempotency.ErrRaced) {
		t.Errorf("a second commit with the key: %v, want ErrRaced", err)
	}
	if u3, _ := s.Users.Get(t.Context(), 2); u3.Balance != 10_00 {
		t.Errorf("balance %s after a raced deposit, want 10.00", u3.Balance)
	}
	// An expired record is as none: the key commits again.
	old := record("expired", 201)
	old.Expires = now().Add(-time.Hour)
	if err := s.Users.CommitDeposit(t.Context(), credit(t, *u2, 1_00), old); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Records.Get(t.Context(), "expired"); got != nil || err != nil {
		t.Errorf("an expired record: %+v, %v", got, err)
	}
	u4, _ := s.Users.Get(t.Context(), 2)
	if err := s.Users.CommitDeposit(t.Context(), credit(t, *u4, 1_00), record("expired", 200)); err != nil {
		t.Errorf("a key whose record expired: %v", err)
	}
	p := s.Records.Begin("scope", "fp")
	if p.Scope != "scope" || p.Fingerprint != "fp" || !p.Expires.After(time.Now()) {
		t.Errorf("Begin = %+v", p)
	}
}
