package orders_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/quiretest"
	"github.com/quireapi/quire/internal/users"
)

// Charge decides every payment with no store: the refusals, and for a
// payment the debit, the order and the emptied cart, each with the content
// hash that its write stores and the version of what was read it expects.
func TestCharge(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
	read := users.User{
		ID: 7, Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", Role: quire.RoleCustomer,
		Status: users.StatusActive, Balance: 50_00, CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Minute),
	}
	read.Hash = quire.ContentHash(&read)
	book := orders.Purchase{Items: []orders.Item{{ProductID: 1, Name: "Frankenstein", Price: 12_50, Quantity: 2, Subtotal: 25_00}}, Total: 25_00}
	cart := &carts.Cart{UserID: 7, Items: map[quire.ID]int{1: 2}, Revision: 4}
	withCart := book
	withCart.Cart = cart

	for _, tc := range []struct {
		name     string
		buyer    func(*users.User)
		purchase orders.Purchase
		now      time.Time
		code     string
		detail   string
		balance  quire.Money
		updated  time.Time
	}{
		{name: "a book", purchase: book, now: now, balance: 25_00, updated: now.Truncate(time.Millisecond)},
		{name: "the whole balance", buyer: func(u *users.User) { u.Balance = 25_00 }, purchase: book, now: now, balance: 0, updated: now.Truncate(time.Millisecond)},
		{name: "a cart", purchase: withCart, now: now, balance: 25_00, updated: now.Truncate(time.Millisecond)},
		{name: "a clock behind the last write", purchase: book, now: now.Add(-2 * time.Minute), balance: 25_00, updated: now.Add(-time.Minute + time.Millisecond)},
		{name: "a closed account", buyer: func(u *users.User) { u.Status = users.StatusClosed }, purchase: book, now: now,
			code: quire.EACCOUNTCLOSED, detail: "The account 7 is closed: it cannot pay."},
		{name: "a short balance", buyer: func(u *users.User) { u.Balance = 24_99 }, purchase: book, now: now,
			code: quire.EINSUFFICIENTFUNDS, detail: "The balance is 24.99, short of the 25.00 to pay: the shop must fund the account first."},
		{name: "a closed account with no balance", buyer: func(u *users.User) { u.Status, u.Balance = users.StatusClosed, 0 }, purchase: book, now: now,
			code: quire.EACCOUNTCLOSED, detail: "The account 7 is closed: it cannot pay."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buyer := read
			if tc.buyer != nil {
				tc.buyer(&buyer)
				buyer.Hash = quire.ContentHash(&buyer)
			}
			pay, err := orders.Charge(buyer, tc.purchase, tc.now)
			if quiretest.Refused(t, err, tc.code, tc.detail) {
				return
			}
			debited := buyer
			debited.Balance, debited.UpdatedAt = tc.balance, tc.updated
			debited.Hash = quire.ContentHash(&debited)
			if diff := cmp.Diff(debited, pay.Buyer); diff != "" {
				t.Errorf("the buyer after the debit (-want +got):\n%s", diff)
			}
			if pay.ReadHash != buyer.Hash {
				t.Errorf("the debit expects the buyer %q, want as read, %q", pay.ReadHash, buyer.Hash)
			}
			o := pay.Order
			if o.ID <= 0 || o.UserID != 7 || o.Total != tc.purchase.Total || !o.CreatedAt.Equal(tc.now.UTC().Truncate(time.Millisecond)) ||
				!cmp.Equal(o.Items, tc.purchase.Items) {
				t.Errorf("order %+v", o)
			}
			if h := o.Hash; h == "" || h != quire.ContentHash(&o) {
				t.Errorf("the order's hash %q is not its content's", h)
			}
			switch {
			case tc.purchase.Cart == nil && pay.Cart != nil:
				t.Errorf("a payment of a book empties a cart: %+v", pay.Cart)
			case tc.purchase.Cart != nil:
				want := &carts.Cart{UserID: 7, Items: map[quire.ID]int{}, Revision: 4}
				want.Hash = quire.ContentHash(want)
				if diff := cmp.Diff(want, pay.Cart); diff != "" {
					t.Errorf("the emptied cart (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// What an order holds is decided with no store: a book or a cart at the
// prices read, and the refusals of an empty cart and of a book that is gone
// or cannot be bought, its status named as the client's version does.
func TestPurchases(t *testing.T) {
	products := map[quire.ID]catalog.Product{
		1: {ID: 1, Name: "Frankenstein", Price: 12_50, Status: catalog.StatusAvailable},
		2: {ID: 2, Name: "Emma", Price: 9_99, Status: catalog.StatusAvailable},
		3: {ID: 3, Name: "Persuasion", Price: 8_00, Status: catalog.StatusArchived},
	}
	cart := func(items map[quire.ID]int) *carts.Cart { return &carts.Cart{UserID: 7, Items: items, Revision: 2} }
	two := cart(map[quire.ID]int{2: 1, 1: 2})
	for _, tc := range []struct {
		name   string
		decide func() (orders.Purchase, error)
		want   orders.Purchase
		code   string
		detail string
	}{
		{name: "a book", decide: func() (orders.Purchase, error) { return orders.Book(products[1], 3, 2) },
			want: orders.Purchase{Items: []orders.Item{{1, "Frankenstein", 12_50, 3, 37_50}}, Total: 37_50}},
		{name: "an archived book", decide: func() (orders.Purchase, error) { return orders.Book(products[3], 1, 2) },
			code: quire.EPRODUCTUNAVAILABLE, detail: "The product 3 is ARCHIVED: it cannot be bought."},
		{name: "an archived book in v1", decide: func() (orders.Purchase, error) { return orders.Book(products[3], 1, 1) },
			code: quire.EPRODUCTUNAVAILABLE, detail: "The product 3 is DISCONTINUED: it cannot be bought."},
		{name: "a cart", decide: func() (orders.Purchase, error) { return orders.Checkout(carts.Price(two, products), products, 2) },
			want: orders.Purchase{Items: []orders.Item{{1, "Frankenstein", 12_50, 2, 25_00}, {2, "Emma", 9_99, 1, 9_99}}, Total: 34_99, Cart: two}},
		{name: "an empty cart", decide: func() (orders.Purchase, error) {
			return orders.Checkout(carts.Price(cart(map[quire.ID]int{}), products), products, 2)
		},
			code: quire.ECARTEMPTY, detail: "The cart is empty: add books with POST /cart first."},
		{name: "a cart with a book gone", decide: func() (orders.Purchase, error) {
			return orders.Checkout(carts.Price(cart(map[quire.ID]int{1: 1, 9: 1}), products), products, 2)
		}, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 9 of the cart does not exist; remove it."},
		{name: "a cart with an archived book", decide: func() (orders.Purchase, error) {
			return orders.Checkout(carts.Price(cart(map[quire.ID]int{1: 1, 3: 1}), products), products, 2)
		}, code: quire.EPRODUCTUNAVAILABLE, detail: "The product 3 is ARCHIVED: it cannot be bought."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decide()
			if quiretest.Refused(t, err, tc.code, tc.detail) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("purchase (-want +got):\n%s", diff)
			}
		})
	}
}
