// Package demo loads the bookshop's demo data into a fresh Quire, for
// `make run` and the events replay.
package demo

import (
	"context"
	"fmt"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/users"
)

// Users returns the demo users. Their ids are fixed and small, so that the
// sample events and the README's examples can name them.
func Users() []users.User {
	return []users.User{
		{ID: 1, Email: "admin@quire.example", FirstName: "Ada", LastName: "Lovelace", Role: users.RoleAdmin, Status: users.StatusActive},
		{ID: 2, Email: "grace@quire.example", FirstName: "Grace", LastName: "Hopper", Role: users.RoleCustomer, Status: users.StatusActive},
		{ID: 3, Email: "alan@quire.example", FirstName: "Alan", LastName: "Turing", Role: users.RoleCustomer, Status: users.StatusActive},
	}
}

// Seed stores the demo users that are not stored yet (by email) and returns
// how many it added. Seeding twice adds nothing the second time.
func Seed(ctx context.Context, s users.Store) (added int, err error) {
	for _, u := range Users() {
		err := s.Create(ctx, &u)
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
