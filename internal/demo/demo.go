// Package demo loads the bookshop's demo data (users with balances,
// authors, books, a cart, an order, a login session and a configuration
// document) into a fresh Quire, for `make run`, the events replay and the
// bench.
package demo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// Load stores all the demo data in the tables t (which must exist) and
// returns how many users it added: none when they were there already.
func Load(ctx context.Context, db *dynamodb.Client, t dynamo.TableNames, o Options) (int, error) {
	added, err := Seed(ctx, dynamo.NewUserStore(db, t), o)
	if err != nil {
		return added, err
	}
	if err := SeedCatalog(ctx, dynamo.NewCatalogStore(db, t)); err != nil {
		return added, err
	}
	if err := SeedShop(ctx, dynamo.NewCartStore(db, t), dynamo.NewOrderStore(db, t)); err != nil {
		return added, err
	}
	if err := SeedSession(ctx, dynamo.NewSessionStore(db, t), time.Now()); err != nil {
		return added, err
	}
	return added, SeedConfig(ctx, dynamo.NewConfigStore(db, t))
}

// Config is the demo configuration document: the shop's settings, its
// shipping zones and its feature flags.
const Config = `{
  "shop": {"name": "Quire Books", "currency": "EUR", "locale": "en-GB", "support_email": "help@quire.example"},
  "shipping": {
    "free_above": 50.00,
    "zones": [
      {"name": "domestic", "countries": ["GB"], "rate": 2.99, "days": [1, 3]},
      {"name": "europe", "countries": ["DE", "FR", "IE", "NL", "ES", "IT"], "rate": 6.50, "days": [3, 7]},
      {"name": "world", "countries": ["*"], "rate": 12.00, "days": [7, 21]}
    ]
  },
  "features": {"gift_wrapping": true, "reviews": false, "recommendations": {"enabled": true, "max": 6}},
  "banners": [{"id": "autumn", "text": "Autumn reading: new arrivals every week", "from": "2026-09-01", "until": "2026-11-30"}]
}`

// SeedConfig stores the demo configuration document, unless a document is
// stored already.
func SeedConfig(ctx context.Context, s config.Store) error {
	d, err := config.Parse([]byte(Config))
	if err != nil {
		return fmt.Errorf("demo configuration: %w", err)
	}
	_, err = config.Put(ctx, s, d, quire.Precondition{Absent: true}, rest.Tag(d.Hash, routes.Versions[0], false))
	if err != nil && quire.ErrorCode(err) != quire.EPRECONDITION {
		return fmt.Errorf("store demo configuration: %w", err)
	}
	return nil
}

// The demo accounts' credentials. `make run` takes the admin's from
// SEED_ADMIN_EMAIL and SEED_ADMIN_PASSWORD, with these defaults.
const (
	AdminEmail       = "admin@quire.example"
	AdminPassword    = "quire-admin-password"
	CustomerEmail    = "grace@quire.example"
	CustomerPassword = "quire-customer-password"
)

// CustomerRefreshToken is the refresh token of a login session of the demo
// customer (Grace, id 2) that SeedSession stores, so that the sample events
// and the README's examples can trade it at POST /tokens without logging in
// first. Like the demo passwords, it is published demo data: anyone who
// reaches a Quire loaded with the demo data can use it, once (using it
// rotates it; using it again ends the session).
const CustomerRefreshToken = "AAAAAAAAAAJkZW1vLXNlc3Npb24tZ3JhZGVtbyByZWZyZXNoIHRva2VuIG9mIEdyYWNlIDAwMDE"

// CustomerSessionID is the id of the session of CustomerRefreshToken.
const CustomerSessionID = "64656d6f2d73657373696f6e2d677261"

// Options are the demo admin's credentials, and the hasher of the demo
// users' passwords: nil, argon2id.Hasher (tests hash at argon2id.MinCost).
type Options struct {
	AdminEmail, AdminPassword string
	Passwords                 password.Hasher
}

// DefaultOptions are the options of an environment that sets none.
func DefaultOptions() Options {
	return Options{AdminEmail: AdminEmail, AdminPassword: AdminPassword}
}

// OptionsFromEnv reads SEED_ADMIN_EMAIL and SEED_ADMIN_PASSWORD, with the
// defaults above. It returns an error for a password too weak to be one.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	if v := getenv("SEED_ADMIN_EMAIL"); v != "" {
		o.AdminEmail = v
	}
	if v := getenv("SEED_ADMIN_PASSWORD"); v != "" {
		o.AdminPassword = v
	}
	if err := password.Check(o.AdminPassword); err != "" {
		return o, fmt.Errorf("SEED_ADMIN_PASSWORD %s", err)
	}
	return o, nil
}

// Users returns the demo users: the admin (id 1) and two customers. Their
// ids are fixed and small, so that the sample events and the README's
// examples can name them.
func Users(o Options) []users.User {
	return []users.User{
		{ID: 1, Email: o.AdminEmail, FirstName: "Ada", LastName: "Lovelace", Role: quire.RoleAdmin, Status: users.StatusActive},
		{ID: 2, Email: CustomerEmail, FirstName: "Grace", LastName: "Hopper", Role: quire.RoleCustomer, Status: users.StatusActive},
		{ID: 3, Email: "alan@quire.example", FirstName: "Alan", LastName: "Turing", Role: quire.RoleCustomer, Status: users.StatusActive},
	}
}

// CustomerBalance is what each demo customer starts with.
const CustomerBalance quire.Money = 50_00

// Seed stores the demo users that are not stored yet (by email or id), the
// customers with CustomerBalance, and returns how many it added. Seeding
// twice adds nothing the second time. The customers' password is
// CustomerPassword.
func Seed(ctx context.Context, s users.Store, o Options) (added int, err error) {
	for _, u := range Users(o) {
		pw := CustomerPassword
		if u.Role == quire.RoleAdmin {
			pw = o.AdminPassword
		}
		_, err := users.Create(ctx, s, u, hash(o.Passwords, pw))
		switch quire.ErrorCode(err) {
		case "":
			added++
			if u.Role == quire.RoleCustomer {
				if _, err := users.Fund(ctx, s, u.ID, CustomerBalance); err != nil {
					return added, fmt.Errorf("seed balance of %s: %w", u.Email, err)
				}
			}
		case quire.EEMAILTAKEN, quire.ECONFLICT: // stored already, by email or by id
		default:
			return added, fmt.Errorf("seed user %s: %w", u.Email, err)
		}
	}
	return added, nil
}

// hashes holds the hash of each password Seed stored, by hasher and
// password: a process that seeds many tables (the tests) hashes each one
// once.
var hashes sync.Map

func hash(h password.Hasher, pw string) string {
	if h == nil {
		h = argon2id.Hasher
	}
	type key struct {
		h  password.Hasher
		pw string
	}
	if v, ok := hashes.Load(key{h, pw}); ok {
		return v.(string)
	}
	v := h.Hash(pw)
	hashes.Store(key{h, pw}, v)
	return v
}

// SeedSession stores the session of CustomerRefreshToken, started at now
// with the customer's first session epoch (0), unless a session of that id
// is stored already (perhaps rotated since: its token is then another).
func SeedSession(ctx context.Context, s login.Sessions, now time.Time) error {
	session, ok := login.SessionOf(CustomerRefreshToken, 0, now)
	if !ok {
		return errors.New("seed session: the demo refresh token is malformed")
	}
	_, _, err := s.Resume(ctx, session.UserID, session.ID)
	switch quire.ErrorCode(err) {
	case "":
		return nil
	case quire.ENOTFOUND:
	default:
		return fmt.Errorf("seed session: %w", err)
	}
	if err := s.Start(ctx, session, CustomerEmail); err != nil {
		return fmt.Errorf("seed session: %w", err)
	}
	return nil
}

// Catalog is where SeedCatalog writes.
type Catalog interface {
	PutAuthor(ctx context.Context, a catalog.Author) error
	PutProduct(ctx context.Context, p catalog.Product, rank int) error
}

// Authors returns the demo authors.
func Authors() []catalog.Author {
	return []catalog.Author{{ID: 1, Name: "Mary Shelley"}, {ID: 2, Name: "Jane Austen"}, {ID: 3, Name: "Herman Melville"}}
}

// book is a demo product with its landing page rank (0: not featured).
type book struct {
	catalog.Product
	rank int
}

func books() []book {
	p := func(id quire.ID, name string, cents quire.Money, author quire.ID, status catalog.Status, rank int) book {
		return book{catalog.Product{ID: id, Name: name, Price: cents, Status: status, AuthorID: author}, rank}
	}
	return []book{
		p(1, "Frankenstein", 1299, 1, catalog.StatusAvailable, 1),
		p(2, "The Last Man", 1100, 1, catalog.StatusAvailable, 0),
		p(3, "Pride and Prejudice", 999, 2, catalog.StatusAvailable, 2),
		p(4, "Emma", 875, 2, catalog.StatusDiscontinued, 0),
		p(5, "Moby-Dick", 1450, 3, catalog.StatusAvailable, 3),
	}
}

// Products returns the demo products.
func Products() []catalog.Product {
	var out []catalog.Product
	for _, b := range books() {
		out = append(out, b.Product)
	}
	return out
}

// SeedCatalog stores the demo authors and products, three of them featured
// on the landing page. Seeding again writes the same items.
func SeedCatalog(ctx context.Context, c Catalog) error {
	authors := map[quire.ID]catalog.Author{}
	for _, a := range Authors() {
		if err := c.PutAuthor(ctx, a); err != nil {
			return fmt.Errorf("seed author %d: %w", a.ID, err)
		}
		authors[a.ID] = a
	}
	for _, b := range books() {
		b.AuthorName = authors[b.AuthorID].Name
		if err := c.PutProduct(ctx, b.Product, b.rank); err != nil {
			return fmt.Errorf("seed product %d: %w", b.ID, err)
		}
	}
	return nil
}

// Orders is where SeedShop writes orders.
type Orders interface {
	PutOrder(ctx context.Context, o orders.Order) error
}

// SeedShop gives the demo customer (id 2) a cart of two books and one
// past order (id 1), unless their cart holds books already.
func SeedShop(ctx context.Context, cs carts.Store, os Orders) error {
	c, err := cs.Get(ctx, 2)
	if err != nil || len(c.Items) > 0 {
		return err
	}
	shop := map[quire.ID]catalog.Product{}
	for _, b := range books() {
		shop[b.ID] = b.Product
	}
	for _, id := range []quire.ID{3, 5} {
		if err := carts.AddTo(ctx, cs, 2, id, 1, shop); err != nil {
			return fmt.Errorf("seed cart: %w", err)
		}
	}
	o := orders.Order{
		ID: 1, UserID: 2, Total: 12_99, CreatedAt: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		Items: []orders.Item{{ProductID: 1, Name: "Frankenstein", Price: 12_99, Quantity: 1, Subtotal: 12_99}},
	}
	if err := os.PutOrder(ctx, o); err != nil {
		return fmt.Errorf("seed order: %w", err)
	}
	return nil
}
