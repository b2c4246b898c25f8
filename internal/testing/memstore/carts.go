package memstore

import (
	"context"
	"fmt"
	"maps"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// CartStore keeps each user's cart whole. It implements carts.Store as
// dynamo.CartStore does.
type CartStore struct{ db *DB }

// Carts returns the database's carts.
func (db *DB) Carts() *CartStore { return &CartStore{db} }

// Get returns the user's cart, empty when they have none. It returns no
// error.
func (s *CartStore) Get(_ context.Context, user quire.ID) (*carts.Cart, error) {
	if err := s.db.may(on("GetItem", routes.TableCarts)); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	c, ok := s.db.carts[user]
	if !ok {
		empty := &carts.Cart{UserID: user, Items: map[quire.ID]int{}}
		empty.Hash = quire.ContentHash(empty)
		return empty, nil
	}
	out := *c
	out.Items = maps.Clone(c.Items)
	return &out, nil
}

// Commit writes the cart ch decided, whole, with rec, on the condition that
// the cart is as read (its revision, or no cart yet): a *quire.Stale
// naming carts.StaleCart, idempotency.ErrRaced.
func (s *CartStore) Commit(_ context.Context, ch carts.Change, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	user := ch.Cart.UserID
	var t tx
	t.add(carts.StaleCart, on("PutItem", routes.TableCarts), func() bool {
		c, ok := s.db.carts[user]
		if ch.ReadRevision > 0 {
			return ok && c.Revision == ch.ReadRevision
		}
		return !ok
	}, func() {
		c := ch.Cart
		c.Items = maps.Clone(c.Items)
		if c.Items == nil {
			c.Items = map[quire.ID]int{}
		}
		s.db.carts[user] = &c
	})
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("change cart of user %d: %w", user, err)
	}
	return nil
}
