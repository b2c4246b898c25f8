// Package demo loads the bookshop's demo data into a fresh Quire, for
// `make run` and the events replay.
package demo

import (
	"context"
	"fmt"

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
