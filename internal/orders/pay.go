package orders

import (
	"time"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
)

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
