package carts_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/quiretest"
)

// cartOf is the cart of user 7 with items, as stored at revision.
func cartOf(revision int64, items map[quire.ID]int) carts.Cart {
	c := carts.Cart{UserID: 7, Items: items, Revision: revision}
	c.Hash = quire.ContentHash(&c)
	return c
}

// full is a cart of MaxItems different books, one copy each.
func full() map[quire.ID]int {
	items := map[quire.ID]int{}
	for id := range quire.ID(carts.MaxItems) {
		items[id+1] = 1
	}
	return items
}

// Additions and removals are decided with no store: the limits, a missing
// line and its preconditions, and for a change the cart as written, with
// the next revision and its content hash, over the revision read.
func TestCartDecisions(t *testing.T) {
	add := func(id quire.ID, n int) func(carts.Cart) (carts.Change, error) {
		return func(c carts.Cart) (carts.Change, error) { return carts.Add(c, id, n, available(c, id), 2) }
	}
	remove := func(id quire.ID, pre quire.Precondition) func(carts.Cart) (carts.Change, error) {
		return func(c carts.Cart) (carts.Change, error) { return carts.Remove(c, id, pre) }
	}
	for _, tc := range []struct {
		name   string
		read   carts.Cart
		decide func(carts.Cart) (carts.Change, error)
		code   string
		detail string
		want   map[quire.ID]int
	}{
		{name: "to no cart yet", read: cartOf(0, map[quire.ID]int{}), decide: add(3, 2), want: map[quire.ID]int{3: 2}},
		{name: "more copies", read: cartOf(4, map[quire.ID]int{3: 2}), decide: add(3, 5), want: map[quire.ID]int{3: 7}},
		{name: "up to the copies a book may have", read: cartOf(4, map[quire.ID]int{3: 90}), decide: add(3, 9), want: map[quire.ID]int{3: 99}},
		{name: "past the copies a book may have", read: cartOf(4, map[quire.ID]int{3: 90}), decide: add(3, 10),
			code: quire.ECARTFULL, detail: "A cart holds at most 99 copies of a book; it has 90 of product 3."},
		{name: "a new book to a full cart", read: cartOf(9, full()), decide: add(carts.MaxItems+1, 1),
			code: quire.ECARTFULL, detail: "A cart holds at most 50 different books."},
		{name: "a book a full cart holds", read: cartOf(9, full()), decide: add(1, 1),
			want: func() map[quire.ID]int { m := full(); m[1] = 2; return m }()},
		{name: "a book that cannot be bought", read: cartOf(4, map[quire.ID]int{3: 2}), decide: func(c carts.Cart) (carts.Change, error) {
			books := available(c, 5)
			books[5] = catalog.Product{ID: 5, Status: catalog.StatusArchived}
			return carts.Add(c, 5, 1, books, 1)
		}, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 5 is DISCONTINUED: it cannot be bought."},
		{name: "a book the catalog does not have", read: cartOf(4, map[quire.ID]int{3: 2}), decide: func(c carts.Cart) (carts.Change, error) {
			return carts.Add(c, 5, 1, available(cartOf(4, map[quire.ID]int{3: 2}), 3), 2)
		}, code: quire.ENOTFOUND, detail: "No product has the id 5."},
		{name: "a removal", read: cartOf(4, map[quire.ID]int{3: 2, 5: 1}), decide: remove(3, quire.Precondition{}), want: map[quire.ID]int{5: 1}},
		{name: "the last book", read: cartOf(4, map[quire.ID]int{3: 2}), decide: remove(3, quire.Precondition{Exists: true}), want: map[quire.ID]int{}},
		{name: "a book not in the cart", read: cartOf(4, map[quire.ID]int{3: 2}), decide: remove(5, quire.Precondition{}),
			code: quire.ENOTFOUND, detail: "The product 5 is not in the cart."},
		{name: "a line with an ETag", read: cartOf(4, map[quire.ID]int{3: 2}), decide: remove(3, quire.Precondition{Match: []string{"abc"}}),
			code: quire.EPRECONDITION, detail: "The resource changed since the ETag in If-Match was sent; nothing was changed. GET it again and retry."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := map[quire.ID]int{}
			for k, v := range tc.read.Items {
				items[k] = v
			}
			ch, err := tc.decide(tc.read)
			if quiretest.Refused(t, err, tc.code, tc.detail) {
				return
			}
			want := carts.Cart{UserID: 7, Items: tc.want, Revision: tc.read.Revision + 1}
			want.Hash = quire.ContentHash(&want)
			if diff := cmp.Diff(carts.Change{Cart: want, ReadRevision: tc.read.Revision}, ch); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
			if !cmp.Equal(items, tc.read.Items) {
				t.Errorf("the cart as read changed: %v", tc.read.Items)
			}
		})
	}
}

// available returns the books of c with id added, each available.
func available(c carts.Cart, id quire.ID) map[quire.ID]catalog.Product {
	books := map[quire.ID]catalog.Product{}
	for _, b := range carts.Books(c, id) {
		books[b] = catalog.Product{ID: b, Price: 1_00, Status: catalog.StatusAvailable}
	}
	return books
}

// Only a product that exists and is available may be added; a refusal
// names the status as the client's version does (v1 has no ARCHIVED).
func TestAddable(t *testing.T) {
	products := map[quire.ID]catalog.Product{
		1: {ID: 1, Name: "Frankenstein", Price: 12_50, Status: catalog.StatusAvailable},
		2: {ID: 2, Name: "Emma", Price: 9_99, Status: catalog.StatusDiscontinued},
		3: {ID: 3, Name: "Persuasion", Price: 8_00, Status: catalog.StatusArchived},
	}
	for _, tc := range []struct {
		product quire.ID
		version int
		code    string
		detail  string
	}{
		{product: 1, version: 2},
		{product: 4, version: 2, code: quire.ENOTFOUND, detail: "No product has the id 4."},
		{product: 2, version: 2, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 2 is DISCONTINUED: it cannot be bought."},
		{product: 3, version: 2, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 3 is ARCHIVED: it cannot be bought."},
		{product: 3, version: 1, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 3 is DISCONTINUED: it cannot be bought."},
	} {
		quiretest.Refused(t, carts.Addable(products, tc.product, tc.version), tc.code, tc.detail)
	}
}
