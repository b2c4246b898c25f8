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

// Priced is a cart at the prices of its books as read: its lines in
// product order, their total, which POST /pay charges if the prices stay as
// they are, and Hash, the content hash of its representation, which shows
// its books' names, prices and status, so that their hashes are part of it
// (POST /pay takes its ETag in If-Match).
type Priced struct {
	Cart  *Cart
	Lines []Line
	Total quire.Money
	Hash  string
}

// Price returns c at the prices of products, the books of c as read (a
// book that is gone has a line with its id and quantity alone).
func Price(c *Cart, products map[quire.ID]catalog.Product) Priced {
	pc := Priced{Cart: c, Lines: []Line{}}
	hashes := []string{c.Hash}
	for _, id := range c.ProductIDs() {
		p := products[id]
		n := c.Items[id]
		sub := p.Price * quire.Money(n)
		pc.Lines = append(pc.Lines, Line{ProductID: id, Name: p.Name, Price: p.Price, Status: p.Status, Quantity: n, Subtotal: sub})
		pc.Total += sub
		hashes = append(hashes, p.Hash)
	}
	pc.Hash = quire.HashBytes([]byte(strings.Join(hashes, " ")))
	return pc
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
