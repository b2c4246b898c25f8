package orders

import (
	"time"

	"github.com/quireapi/quire/shared/carts"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/users"
)

// Payment is a decided payment, for the store to commit whole or not at
// all: the buyer after the debit, written only over the buyer as read
// (ReadHash); the new order; and, when paying a cart, the cart emptied,
// written only over the cart as read (its Revision).
type Payment struct {
	Buyer    users.User
	ReadHash string
	Order    Order
	Cart     *carts.Cart
}

// What the commit of a payment may find changed since it was read: the
// What of its *quire.Stale error.
const (
	StaleBuyer = "buyer" // the account paid from (a concurrent payment or deposit)
	StaleCart  = "cart"  // the cart paid
	StaleOrder = "order" // the new order's id, taken in the same millisecond
)

// Charge decides how buyer pays for p at now: the debit of p's total from
// the balance and the order of p's items. It refuses a closed account
// (EACCOUNTCLOSED) and a balance short of the total (EINSUFFICIENTFUNDS).
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
	if p.Cart != nil {
		pay.Cart = carts.Emptied(*p.Cart)
	}
	return pay, nil
}
