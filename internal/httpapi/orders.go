package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Orders serves buying and orders.
type Orders struct {
	Store   orders.Store
	Catalog orders.Catalog
	Carts   carts.Store
}

// Routes returns the handler of each orders route, keyed as in the route
// table.
func (h *Orders) Routes() rest.Handlers {
	return rest.Handlers{
		"POST /products/{id}/buy": h.buy,
		"POST /pay":               h.pay,
		"GET /orders":             h.list,
		"GET /orders/{id}":        h.get,
	}
}

// Quantity is the body of POST /products/{id}/buy.
type Quantity struct {
	Quantity *int `json:"quantity"`
}

// buy buys copies of one book at the price read, if it is still the one
// If-Match names.
func (h *Orders) buy(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var q Quantity
	if err := rest.Decode(r.Request, &q); err != nil {
		return err
	}
	if e := carts.CheckQuantity(q.Quantity); e != nil {
		return quire.Invalid(*e)
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	return h.charge(r, func(ctx context.Context) (orders.Purchase, error) {
		p, err := h.Catalog.Product(ctx, id)
		if err != nil {
			return orders.Purchase{}, catalog.NoProduct(err, id)
		}
		if err := pre.Check(p.Hash); err != nil {
			return orders.Purchase{}, err
		}
		return orders.Book(*p, *q.Quantity, r.Version)
	})
}

// pay pays the caller's whole cart at the prices read, if it is still the
// cart If-Match names.
func (h *Orders) pay(w http.ResponseWriter, r *rest.Request) error {
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	return h.charge(r, func(ctx context.Context) (orders.Purchase, error) {
		c, err := h.Carts.Get(ctx, r.Caller.ID)
		if err != nil {
			return orders.Purchase{}, err
		}
		products, err := h.Catalog.ProductsByID(ctx, c.ProductIDs())
		if err != nil {
			return orders.Purchase{}, err
		}
		priced := carts.Price(c, products)
		if err := pre.Check(priced.Hash); err != nil {
			return orders.Purchase{}, err
		}
		return orders.Checkout(priced, products, r.Version)
	})
}

// charge pays for what read reads, from the caller's balance, and answers
// 201 with the order: it reads the purchase and the buyer at once (one
// round trip), decides the payment and commits it with the answer to the
// request's idempotency key. A buyer that changed meanwhile (a concurrent
// payment or deposit) is read again, and the payment decided again (see
// quire.Retry); a purchase that changed is a conflict, which the client
// resolves by reading it again.
func (h *Orders) charge(r *rest.Request, read func(context.Context) (orders.Purchase, error)) error {
	ctx := r.Context()
	var (
		purchase orders.Purchase
		readErr  error
		read1    = make(chan struct{})
	)
	go func() {
		defer close(read1)
		purchase, readErr = read(ctx)
	}()
	for n := 1; ; n++ {
		buyer, err := h.Store.Buyer(ctx, r.Caller.ID)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			err = quire.Errorf(quire.EACCOUNTCLOSED, "The user %d has no account to pay from.", r.Caller.ID)
		}
		<-read1
		if err := cmp.Or(err, readErr); err != nil {
			return err
		}
		pay, err := orders.Charge(*buyer, purchase, time.Now())
		if err != nil {
			return err
		}
		rec, err := r.Created("/orders/"+pay.Order.ID.String(), pay.Order)
		if err != nil {
			return err
		}
		err = h.Store.CommitPayment(ctx, pay, rec)
		stale, _ := errors.AsType[*quire.Stale](err)
		if stale != nil && stale.What == orders.StaleCart {
			return quire.Errorf(quire.ECONFLICT, "The cart changed during the payment; nothing was paid. Check it and pay again.")
		}
		if again, err := quire.Retry(ctx, n, err); !again {
			if stale, ok := errors.AsType[*quire.Stale](err); ok {
				if stale.What == orders.StaleBuyer {
					return quire.Errorf(quire.ECONFLICT, "The account changed during the payment; nothing was paid. Pay again.")
				}
				return fmt.Errorf("pay %s for user %d: %w", purchase.Total, r.Caller.ID, err)
			}
			return err
		}
	}
}

func (h *Orders) get(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	o, err := h.Store.Get(r.Context(), r.Caller.ID, id, r.Caller.Admin())
	if err != nil {
		return quire.Reword(err, quire.ENOTFOUND, "No order has the id %d.", id)
	}
	rest.SetETag(w, r, o.Hash)
	return rest.JSON(w, r, http.StatusOK, o)
}

// list answers the caller's own orders, oldest first, a page at a time.
func (h *Orders) list(w http.ResponseWriter, r *rest.Request) error {
	limit, after, err := rest.ParseIDPage(r.Request)
	if err != nil {
		return err
	}
	os, next, err := h.Store.List(r.Context(), r.Caller.ID, after, limit)
	if err != nil {
		return err
	}
	if next != 0 {
		rest.SetNext(w, r.Request, next.String())
	}
	return rest.JSON(w, r, http.StatusOK, os)
}
