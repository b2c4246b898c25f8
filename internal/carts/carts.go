// Package carts is the shopping cart: the books a user means to buy and
// how many of each, kept in DynamoDB between requests, and paid all at
// once by POST /pay (package orders).
package carts

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// Bounds of a cart: how many copies of one book, and how many books. A
// paid cart is one DynamoDB transaction, which holds at most 100 items.
const (
	MaxQuantity = 99
	MaxItems    = 50
)

// Cart is a user's cart: how many copies of each product. Revision counts
// its changes, so that paying it can check that it is still as read; Hash
// is the content hash of its user and items, stored with it.
type Cart struct {
	UserID   quire.ID
	Items    map[quire.ID]int
	Revision int64  `json:"-"`
	Hash     string `json:"-"`
}

// Emptied returns c as a payment of it leaves it: with no items and their
// content hash, and c's revision, which the write expects to find.
func Emptied(c Cart) *Cart {
	empty := &Cart{UserID: c.UserID, Items: map[quire.ID]int{}, Revision: c.Revision}
	empty.Hash = quire.ContentHash(empty)
	return empty
}

// ProductIDs returns the ids of the cart's products, in order.
func (c *Cart) ProductIDs() []quire.ID {
	ids := make([]quire.ID, 0, len(c.Items))
	for id := range c.Items {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Store keeps carts.
type Store interface {
	// Get returns the user's cart, read consistently, empty when they have
	// none.
	Get(ctx context.Context, user quire.ID) (*Cart, error)
	// Commit writes the cart ch decided (see Add and Remove) with rec, the
	// answer to the request's idempotency key when it has one. With
	// nothing written, it returns a *quire.Stale naming StaleCart when the
	// cart is not as read, and idempotency.ErrRaced when another request
	// with rec's key committed first.
	Commit(ctx context.Context, ch Change, rec *idempotency.Record) error
}

// Products finds products by id.
type Products interface {
	// ProductsByID returns the products with the ids that exist.
	ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error)
}

// Line is one book in a cart, at its current price.
type Line struct {
	ProductID quire.ID       `json:"product_id"`
	Name      string         `json:"name"`
	Price     quire.Money    `json:"price"`
	Status    catalog.Status `json:"status"`
	Quantity  int            `json:"quantity"`
	Subtotal  quire.Money    `json:"subtotal"`
}

// Priced returns the lines of c at the prices of products, which must hold
// every product of c.
func Priced(c *Cart, products map[quire.ID]catalog.Product) ([]Line, quire.Money) {
	lines := []Line{}
	var total quire.Money
	for _, id := range c.ProductIDs() {
		p := products[id]
		n := c.Items[id]
		sub := p.Price * quire.Money(n)
		lines = append(lines, Line{ProductID: id, Name: p.Name, Price: p.Price, Status: p.Status, Quantity: n, Subtotal: sub})
		total += sub
	}
	return lines, total
}

// ETagHash is the content hash of c's representation at the prices of
// products: the cart shows its books' names, prices and status, so their
// hashes are part of it. POST /pay takes it in If-Match.
func ETagHash(c *Cart, products map[quire.ID]catalog.Product) string {
	hashes := []string{c.Hash}
	for _, id := range c.ProductIDs() {
		hashes = append(hashes, products[id].Hash)
	}
	return quire.HashBytes([]byte(strings.Join(hashes, " ")))
}

// CheckQuantity checks a body's quantity of copies of a book, which the
// body gave as a JSON integer written without a fraction or an exponent
// (rest.Decode refuses 1.5, 2.0 and 1e1): from 1 to MaxQuantity.
func CheckQuantity(q *int) *quire.FieldError {
	switch {
	case q == nil:
		return &quire.FieldError{Pointer: "/quantity", Detail: "is required"}
	case *q < 1 || *q > MaxQuantity:
		return &quire.FieldError{Pointer: "/quantity", Detail: fmt.Sprintf("must be a whole number from 1 to %d", MaxQuantity)}
	}
	return nil
}
