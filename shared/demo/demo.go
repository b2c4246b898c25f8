// Package demo loads the bookshop's demo data (users, authors, books) into a
// fresh Quire, for `make run`, the events replay and the bench.
package demo

import (
	"context"
	"fmt"

	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/password"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/users"
)

// The demo accounts' credentials. `make run` takes the admin's from
// SEED_ADMIN_EMAIL and SEED_ADMIN_PASSWORD, with these defaults.
const (
	AdminEmail       = "admin@quire.example"
	AdminPassword    = "quire-admin-password"
	CustomerEmail    = "grace@quire.example"
	CustomerPassword = "quire-customer-password"
)

// Options are the demo admin's credentials.
type Options struct {
	AdminEmail, AdminPassword string
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

// Seed stores the demo users that are not stored yet (by email or id) and
// returns how many it added. Seeding twice adds nothing the second time.
// The customers' password is CustomerPassword.
func Seed(ctx context.Context, s users.Store, o Options) (added int, err error) {
	for _, u := range Users(o) {
		pw := CustomerPassword
		if u.Role == quire.RoleAdmin {
			pw = o.AdminPassword
		}
		err := s.Create(ctx, &u, password.Hash(pw))
		switch quire.ErrorCode(err) {
		case "":
			added++
		case quire.ECONFLICT:
		default:
			return added, fmt.Errorf("seed user %s: %w", u.Email, err)
		}
	}
	return added, nil
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
