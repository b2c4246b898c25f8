// Package catalog is the bookshop's catalog: the books it sells (products),
// their authors, and the books the landing page features.
package catalog

import (
	"context"
	"net/http"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
)

// Status is whether a product can be bought.
type Status string

// The product states.
const (
	StatusAvailable    Status = "AVAILABLE"
	StatusDiscontinued Status = "DISCONTINUED"
)

// Author is a writer of books in the catalog.
type Author struct {
	ID   quire.ID `json:"id"`
	Name string   `json:"name"`
}

// Product is a book for sale.
type Product struct {
	ID       quire.ID    `json:"id"`
	Name     string      `json:"name"`
	Price    quire.Money `json:"price"`
	Status   Status      `json:"status"`
	AuthorID quire.ID    `json:"author_id"`
}

// FeaturedBook is a product on the landing page, with its author's name.
type FeaturedBook struct {
	Product
	AuthorName string `json:"author_name"`
}

// Landing is the body of GET /landing.
type Landing struct {
	Featured []FeaturedBook `json:"featured"`
}

// MaxFeatured bounds the books the landing page shows.
const MaxFeatured = 12

// Store keeps the catalog.
type Store interface {
	// Featured returns up to limit featured books, in their featured
	// order.
	Featured(ctx context.Context, limit int) ([]FeaturedBook, error)
}

// Handlers serves the catalog from a Store.
type Handlers struct {
	Store Store
}

// Routes returns the handler of each catalog route, keyed as in the route
// table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{"GET /landing": h.landing}
}

// landing answers the landing page's data, public and the same for every
// caller, so caches may keep it for a minute.
func (h *Handlers) landing(w http.ResponseWriter, r *http.Request) error {
	books, err := h.Store.Featured(r.Context(), MaxFeatured)
	if err != nil {
		return err
	}
	if books == nil {
		books = []FeaturedBook{}
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	return rest.JSON(w, r, http.StatusOK, Landing{Featured: books})
}
