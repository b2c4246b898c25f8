// Package orders is buying: one book at once (POST /products/{id}/buy) or
// the whole cart (POST /pay), paid from the buyer's prepaid balance, and
// the orders that record what was bought.
package orders

import (
	"context"
	"time"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
)

// Item is one book of an order, at the price it was bought for.
type Item struct {
	ProductID quire.ID    `json:"product_id"`
	Name      string      `json:"name"`
	Price     quire.Money `json:"price"`
	Quantity  int         `json:"quantity"`
	Subtotal  quire.Money `json:"subtotal"`
}

// Order is a purchase: what was bought, by whom, for how much.
type Order struct {
	ID        quire.ID    `json:"id"`
	UserID    quire.ID    `json:"user_id"`
	Items     []Item      `json:"items"`
	Total     quire.Money `json:"total"`
	CreatedAt time.Time   `json:"created_at"`
	// Hash is the content hash of the order, stored with it: its ETag.
	Hash string `json:"-"`
}

// Purchase is what a buyer pays for: the items at the prices read, and,
// when paying a cart, the cart as read (which the payment empties, if it
// has not changed).
type Purchase struct {
	Items []Item
	Total quire.Money
	Cart  *carts.Cart
}

// Book decides what buying n copies of p, as read, buys: EPRODUCTUNAVAILABLE
// when p cannot be bought (its status named as API version v does).
func Book(p catalog.Product, n, v int) (Purchase, error) {
	if err := p.Buyable(v); err != nil {
		return Purchase{}, err
	}
	sub := p.Price * quire.Money(n)
	return Purchase{Items: []Item{{p.ID, p.Name, p.Price, n, sub}}, Total: sub}, nil
}

// Checkout decides what paying the cart c, priced at the products read,
// buys: each line at the price read. It refuses an empty cart (ECARTEMPTY)
// and a cart holding a product that is gone or cannot be bought
// (EPRODUCTUNAVAILABLE, its status named as API version v does).
func Checkout(c carts.Priced, products map[quire.ID]catalog.Product, v int) (Purchase, error) {
	if len(c.Lines) == 0 {
		return Purchase{}, quire.Errorf(quire.ECARTEMPTY, "The cart is empty: add books with POST /cart first.")
	}
	purchase := Purchase{Total: c.Total, Cart: c.Cart}
	for _, l := range c.Lines {
		p, ok := products[l.ProductID]
		if !ok {
			return Purchase{}, quire.Errorf(quire.EPRODUCTUNAVAILABLE, "The product %d of the cart does not exist; remove it.", l.ProductID)
		}
		if err := p.Buyable(v); err != nil {
			return Purchase{}, err
		}
		purchase.Items = append(purchase.Items, Item{l.ProductID, l.Name, l.Price, l.Quantity, l.Subtotal})
	}
	return purchase, nil
}

// Store keeps orders and commits payments.
type Store interface {
	// Buyer reads the account of user, consistently: ENOTFOUND when it is
	// gone.
	Buyer(ctx context.Context, user quire.ID) (*users.User, error)
	// CommitPayment commits pay in one transaction, with rec, the answer to
	// the request's idempotency key, when it has one. With nothing written,
	// it returns a *quire.Stale naming StaleBuyer, StaleCart or StaleOrder
	// when that was not as read, and idempotency.ErrRaced when another
	// request with rec's key committed first.
	CommitPayment(ctx context.Context, pay Payment, rec *idempotency.Record) error
	// Get returns the order id: of the user, or anyone's when anyUser is set.
	Get(ctx context.Context, user, id quire.ID, anyUser bool) (*Order, error)
	// List returns the user's orders, newest last, a page at a time.
	List(ctx context.Context, user, after quire.ID, limit int) ([]Order, quire.ID, error)
}

// Catalog finds the products a purchase needs.
type Catalog interface {
	Product(ctx context.Context, id quire.ID) (*catalog.Product, error)
	ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error)
}

// Payment is a decided payment, for the store to commit whole or not at
// all: the buyer after the debit, written only over the buyer as read
// (ReadHash); the new order; when paying a cart, the cart emptied,
// written only over the cart as read (its Revision); and the event of the
// order placed.
type Payment struct {
	Buyer    users.User
	ReadHash string
	Order    Order
	Cart     *carts.Cart
	Event    *quire.Event
}

// Placed is the data of an order.placed event: the order's lines and total,
// and its buyer's id.
type Placed struct {
	OrderID quire.ID    `json:"order_id"`
	UserID  quire.ID    `json:"user_id"`
	Items   []Item      `json:"items"`
	Total   quire.Money `json:"total"`
}

// What the commit of a payment may find changed since it was read: the
// What of its *quire.Stale error.
const (
	StaleBuyer = "buyer" // the account paid from (a concurrent payment or deposit)
	StaleCart  = "cart"  // the cart paid
	StaleOrder = "order" // the new order's id, taken in the same millisecond
)

// Charge decides how buyer pays for p at now: the debit of p's total from
// the balance, the order of p's items and its order.placed event. It
// refuses a closed account (EACCOUNTCLOSED) and a balance short of the
// total (EINSUFFICIENTFUNDS).
func Charge(buyer users.User, p Purchase, now time.Time) (Payment, error) {
	switch {
	case buyer.Status != users.StatusActive:
		return Payment{}, quire.Errorf(quire.EACCOUNTCLOSED, "The account %d is closed: it cannot pay.", buyer.ID)
	case buyer.Balance < p.Total:
		return Payment{}, quire.Errorf(quire.EINSUFFICIENTFUNDS,
			"The balance is %s, short of the %s to pay: the shop must fund the account first.", buyer.Balance, p.Total)
	}
	now = now.UTC().Truncate(time.Millisecond)
	pay := Payment{Buyer: buyer, ReadHash: buyer.Hash}
	pay.Buyer.Balance -= p.Total
	pay.Buyer.UpdatedAt = quire.WriteTime(now, buyer.UpdatedAt)
	pay.Buyer.Hash = quire.ContentHash(&pay.Buyer)
	pay.Order = Order{ID: quire.NewID(now), UserID: buyer.ID, Items: p.Items, Total: p.Total, CreatedAt: now}
	pay.Order.Hash = quire.ContentHash(&pay.Order)
	ev := quire.NewEvent(quire.EventOrderPlaced, "/orders/"+pay.Order.ID.String(), pay.Order.Hash, now,
		Placed{OrderID: pay.Order.ID, UserID: buyer.ID, Items: p.Items, Total: p.Total})
	pay.Event = &ev
	if c := p.Cart; c != nil {
		// The cart as the payment leaves it: with no items, over its
		// revision as read.
		pay.Cart = &carts.Cart{UserID: c.UserID, Items: map[quire.ID]int{}, Revision: c.Revision}
		pay.Cart.Hash = quire.ContentHash(pay.Cart)
	}
	return pay, nil
}
