package httpapi

import (
	"errors"
	"net/http"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Carts serves the caller's cart.
type Carts struct {
	Store    carts.Store
	Products carts.Products
}

// Routes returns the handler of each cart route, keyed as in the route
// table.
func (h *Carts) Routes() rest.Handlers {
	return rest.Handlers{
		"GET /cart":                       h.get,
		"POST /cart":                      h.add,
		"DELETE /cart/items/{product_id}": h.remove,
	}
}

// cartLine is one book of a cart as the API shows it, at its current
// price, with a link to the book.
type cartLine struct {
	carts.Line
	Links []Link `json:"links"`
}

// cartRep is a cart as the API shows it: its lines in product order and
// their total, which POST /pay charges if the prices stay as they are.
type cartRep struct {
	Items []cartLine  `json:"items"`
	Total quire.Money `json:"total"`
}

// cartOf is c as r's version shows it.
func cartOf(r *rest.Request, c carts.Priced) cartRep {
	rep := cartRep{Items: make([]cartLine, len(c.Lines)), Total: c.Total}
	products := r.Path("/products/")
	for i, l := range c.Lines {
		l.Status = l.Status.In(r.Version)
		rep.Items[i] = cartLine{l, []Link{{Rel: "product", Href: products + l.ProductID.String()}}}
	}
	return rep
}

func (h *Carts) get(w http.ResponseWriter, r *rest.Request) error {
	c, err := h.Store.Get(r.Context(), r.Caller.ID)
	if err != nil {
		return err
	}
	products, err := h.Products.ProductsByID(r.Context(), c.ProductIDs())
	if err != nil {
		return err
	}
	priced := carts.Price(c, products)
	rest.SetETag(w, r, priced.Hash)
	return rest.JSON(w, r, http.StatusOK, cartOf(r, priced))
}

// Addition is the body of POST /cart.
type Addition struct {
	ProductID *quire.ID `json:"product_id"`
	Quantity  *int      `json:"quantity"`
}

func (a Addition) check() error {
	var errs []quire.FieldError
	if a.ProductID == nil {
		errs = append(errs, quire.FieldError{Pointer: "/product_id", Detail: "is required"})
	} else if *a.ProductID < 1 || *a.ProductID > quire.MaxID {
		errs = append(errs, quire.FieldError{Pointer: "/product_id", Detail: "must be a product's id"})
	}
	if e := carts.CheckQuantity(a.Quantity); e != nil {
		errs = append(errs, *e)
	}
	if errs != nil {
		return quire.Invalid(errs...)
	}
	return nil
}

// add puts copies of an available book in the caller's cart, or more
// copies of one it holds, and answers the cart. The added book is read
// while the cart is, so that the catalog's cache holds it when the new
// cart's books are read; that read says what went wrong, if anything did.
func (h *Carts) add(w http.ResponseWriter, r *rest.Request) error {
	var a Addition
	if err := rest.Decode(r.Request, &a); err != nil {
		return err
	}
	if err := a.check(); err != nil {
		return err
	}
	ctx, id := r.Context(), *a.ProductID
	warm := make(chan struct{})
	go func() {
		defer close(warm)
		_, _ = h.Products.ProductsByID(ctx, []quire.ID{id}) // the next read of it reports its error
	}()
	for n := 1; ; n++ {
		c, err := h.Store.Get(ctx, r.Caller.ID)
		<-warm
		if err != nil {
			return err
		}
		products, err := h.Products.ProductsByID(ctx, carts.Books(*c, id))
		if err != nil {
			return err
		}
		ch, err := carts.Add(*c, id, *a.Quantity, products, r.Version)
		if err != nil {
			return err
		}
		rec, err := r.Render(http.StatusOK, cartOf(r, carts.Price(&ch.Cart, products)))
		if err != nil {
			return err
		}
		if again, err := quire.Retry(ctx, n, h.Store.Commit(ctx, ch, rec)); !again {
			return changed(err)
		}
	}
}

func (h *Carts) remove(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("product_id"))
	if err != nil {
		return err
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		c, err := h.Store.Get(r.Context(), r.Caller.ID)
		if err != nil {
			return err
		}
		ch, err := carts.Remove(*c, id, pre)
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, h.Store.Commit(r.Context(), ch, nil)); !again {
			if err != nil {
				return changed(err)
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
}

// changed is err, but for a cart that kept changing: ECONFLICT.
func changed(err error) error {
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return quire.Errorf(quire.ECONFLICT, "The cart changed during the request; retry it.")
	}
	return err
}
