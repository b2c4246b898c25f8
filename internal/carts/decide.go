package carts

import (
	"context"
	"maps"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/quire"
)

// Change is a decided change of a cart, for the store to commit: the cart
// as written, with the next revision, only over the cart as read (its
// revision, ReadRevision; 0 for a user with no cart stored).
type Change struct {
	Cart         Cart
	ReadRevision int64
}

// StaleCart is what the commit of a Change may find changed since it was
// read: the What of its *quire.Stale error.
const StaleCart = "cart"

// next returns the Change of c into a copy that change changes.
func next(c Cart, change func(*Cart) error) (Change, error) {
	n := Cart{UserID: c.UserID, Items: maps.Clone(c.Items), Revision: c.Revision + 1}
	if n.Items == nil {
		n.Items = map[quire.ID]int{}
	}
	if err := change(&n); err != nil {
		return Change{}, err
	}
	n.Hash = quire.ContentHash(&n)
	return Change{Cart: n, ReadRevision: c.Revision}, nil
}

// Add decides adding quantity copies of product to c, with books the
// catalog's products of c and product as read (see Books), for a client of
// API version v. It refuses a book that would pass MaxQuantity copies, and
// a new book in a cart that holds MaxItems already (ECARTFULL); then a
// book that cannot be added (see Addable).
func Add(c Cart, product quire.ID, quantity int, books map[quire.ID]catalog.Product, v int) (Change, error) {
	return next(c, func(n *Cart) error {
		have, has := n.Items[product]
		switch {
		case has && have+quantity > MaxQuantity:
			return quire.Errorf(quire.ECARTFULL, "A cart holds at most %d copies of a book; it has %d of product %d.", MaxQuantity, have, product)
		case !has && len(n.Items) >= MaxItems:
			return quire.Errorf(quire.ECARTFULL, "A cart holds at most %d different books.", MaxItems)
		}
		n.Items[product] = have + quantity
		return Addable(books, product, v)
	})
}

// Books returns the ids of the books of c with product added: what Add
// needs read.
func Books(c Cart, product quire.ID) []quire.ID {
	if _, has := c.Items[product]; has {
		return c.ProductIDs()
	}
	return append(c.ProductIDs(), product)
}

// Addable refuses adding product to a cart, with products the books of the
// cart as it would be, as read: ENOTFOUND when there is no such product,
// EPRODUCTUNAVAILABLE when it cannot be bought (its status named as API
// version v does).
func Addable(products map[quire.ID]catalog.Product, product quire.ID, v int) error {
	p, ok := products[product]
	if !ok {
		return quire.Errorf(quire.ENOTFOUND, "No product has the id %d.", product)
	}
	return p.Buyable(v)
}

// Remove decides taking product out of c: ENOTFOUND when it is not in it.
// A line of a cart has no representation of its own, so of the
// preconditions pre may hold only If-Match: * (the line exists):
// EPRECONDITION for the others.
func Remove(c Cart, product quire.ID, pre quire.Precondition) (Change, error) {
	return next(c, func(n *Cart) error {
		if _, ok := n.Items[product]; !ok {
			return quire.Errorf(quire.ENOTFOUND, "The product %d is not in the cart.", product)
		}
		if err := pre.Check("line"); err != nil {
			return err
		}
		delete(n.Items, product)
		return nil
	})
}

// AddTo adds quantity copies of product to the user's cart in s, with
// books the products of the cart as it would be: demo data, and carts the
// tests set up. A request's change of a cart goes through its handler,
// which commits it with the answer to its idempotency key.
func AddTo(ctx context.Context, s Store, user, product quire.ID, quantity int, books map[quire.ID]catalog.Product) error {
	c, err := s.Get(ctx, user)
	if err != nil {
		return err
	}
	ch, err := Add(*c, product, quantity, books, 2)
	if err != nil {
		return err
	}
	return s.Commit(ctx, ch, nil)
}
