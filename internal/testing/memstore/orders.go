package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// OrderStore keeps orders under their buyer and commits payments. It
// implements orders.Store as dynamo.OrderStore does.
type OrderStore struct{ db *DB }

// Orders returns the database's orders.
func (db *DB) Orders() *OrderStore { return &OrderStore{db} }

// CommitPayment commits pay with rec, whole or not at all: a *quire.Stale
// naming orders.StaleBuyer when the buyer is not as read, orders.StaleOrder
// when the order's id is taken, orders.StaleCart when the cart is not at
// the revision read, and idempotency.ErrRaced.
func (s *OrderStore) CommitPayment(_ context.Context, pay orders.Payment, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	b, o := pay.Buyer, pay.Order
	var t tx
	t.add(orders.StaleBuyer, on("UpdateItem", routes.TableUsers), func() bool { u := s.db.users[b.ID]; return u != nil && u.Hash == pay.ReadHash }, func() {
		u := s.db.users[b.ID]
		u.Balance, u.UpdatedAt, u.Hash = b.Balance, stored(b.UpdatedAt), b.Hash
	})
	t.add(orders.StaleOrder, on("PutItem", routes.TableOrders), func() bool { _, ok := s.db.orders[o.UserID][o.ID]; return !ok }, func() { s.put(o) })
	if c := pay.Cart; c != nil {
		t.add(orders.StaleCart, on("UpdateItem", routes.TableCarts), func() bool { cur, ok := s.db.carts[c.UserID]; return ok && cur.Revision == c.Revision }, func() {
			cur := s.db.carts[c.UserID]
			cur.Items, cur.Hash, cur.Revision = map[quire.ID]int{}, c.Hash, cur.Revision+1
		})
	}
	t.publish(s.db, pay.Event)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("pay %s for user %d: %w", o.Total, b.ID, err)
	}
	return nil
}

// put stores o under its buyer.
func (s *OrderStore) put(o orders.Order) {
	o.Items = slices.Clone(o.Items)
	if o.Items == nil {
		o.Items = []orders.Item{}
	}
	o.CreatedAt = stored(o.CreatedAt)
	if s.db.orders[o.UserID] == nil {
		s.db.orders[o.UserID] = map[quire.ID]orders.Order{}
	}
	s.db.orders[o.UserID][o.ID] = o
}

// Buyer reads the account that pays: ENOTFOUND when it is gone.
func (s *OrderStore) Buyer(ctx context.Context, user quire.ID) (*users.User, error) {
	return s.db.Users().Get(ctx, user)
}

// Get returns the user's order id, and for an admin (anyUser) anyone's:
// ENOTFOUND when there is none.
func (s *OrderStore) Get(_ context.Context, user, id quire.ID, anyUser bool) (*orders.Order, error) {
	reads := []dynamo.Access{on("GetItem", routes.TableOrders)}
	if anyUser {
		reads = append(reads, queried(routes.TableOrders)) // by id, beside
	}
	if err := s.db.may(reads...); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	o, ok := s.db.orders[user][id]
	if !ok && anyUser {
		for _, os := range s.db.orders {
			if o, ok = os[id]; ok {
				break
			}
		}
	}
	if !ok {
		return nil, quire.NotFound("order " + id.String())
	}
	o.Items = slices.Clone(o.Items)
	return &o, nil
}

// List returns a page of the user's orders in id order (oldest first).
func (s *OrderStore) List(_ context.Context, user, after quire.ID, limit int) ([]orders.Order, quire.ID, error) {
	if err := s.db.may(on("Query", routes.TableOrders)); err != nil {
		return nil, 0, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	all := make([]orders.Order, 0, len(s.db.orders[user]))
	for _, o := range s.db.orders[user] {
		o.Items = slices.Clone(o.Items)
		all = append(all, o)
	}
	slices.SortFunc(all, func(a, b orders.Order) int { return cmp.Compare(a.ID, b.ID) })
	os, next := page(all, func(o orders.Order) quire.ID { return o.ID }, after, limit)
	return os, next, nil
}

// PutOrder stores o as it is, with its content hash, for demo data. It
// returns no error.
func (s *OrderStore) PutOrder(_ context.Context, o orders.Order) error {
	if err := s.db.may(on("PutItem", routes.TableOrders)); err != nil {
		return err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	o.Hash = quire.ContentHash(&o)
	s.put(o)
	return nil
}
