// Package catalog is the bookshop's catalog: the books it sells (products),
// their authors, and the books the landing page features.
package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// Author is a writer of books in the catalog.
type Author struct {
	ID   quire.ID
	Name string
	Hash string `json:"-"` // the content hash of the above, stored with it
}

// Product is a book for sale. AuthorName is its author's name, kept with
// it for the landing page.
type Product struct {
	ID         quire.ID
	Name       string
	Price      quire.Money
	Status     Status
	AuthorID   quire.ID
	AuthorName string
	Hash       string `json:"-"` // the content hash of the above, stored with it
}

// Buyable refuses a product that cannot be bought, one not available
// (EPRODUCTUNAVAILABLE), naming its status as API version v does.
func (p Product) Buyable(v int) error {
	if !p.OnSale() {
		return quire.Errorf(quire.EPRODUCTUNAVAILABLE, "The product %d is %s: it cannot be bought.", p.ID, p.Status.In(v))
	}
	return nil
}

// OnSale reports whether p can be bought: only then does the landing page
// feature it.
func (p Product) OnSale() bool { return p.Status == StatusAvailable }

// Bounds on catalog fields.
const (
	MaxNameLen = 200 // characters, of a product's or an author's name
	MaxPrice   = quire.Money(10_000_00)
)

// MaxFeatured bounds the books the landing page shows.
const MaxFeatured = 12

// ListQuery selects a page of authors or products.
type ListQuery struct {
	After    quire.ID // 0 for the first page
	Limit    int
	AuthorID quire.ID // only this author's books, when set
}

// Store keeps the catalog. Its methods return *quire.Error with ENOTFOUND
// for a missing author or product.
type Store interface {
	// Featured returns up to limit featured books that are available, in
	// their featured order.
	Featured(ctx context.Context, limit int) ([]Product, error)
	Author(ctx context.Context, id quire.ID) (*Author, error)
	// Authors and Products return a page ordered by id, and the id the
	// next page starts after, or 0.
	Authors(ctx context.Context, q ListQuery) ([]Author, quire.ID, error)
	Product(ctx context.Context, id quire.ID) (*Product, error)
	Products(ctx context.Context, q ListQuery) ([]Product, quire.ID, error)
	// Current reads the product id (none when 0) and the author authorID
	// as they are stored now, never from a cache, at once: nil for one
	// that does not exist. A write reads what it decides on with it.
	Current(ctx context.Context, id, authorID quire.ID) (*Product, *Author, error)
	// CommitAuthor stores the new author of w (see NewAuthor) and w's
	// event with rec, the answer to the request's idempotency key when it
	// has one. With nothing written, it returns a *quire.Stale naming
	// StaleID when the author's id is taken, and idempotency.ErrRaced when
	// another request with rec's key committed first.
	CommitAuthor(ctx context.Context, w AuthorWrite, rec *idempotency.Record) error
	// CommitProduct stores w with rec and w's event as CommitAuthor
	// does: a new product (see NewProduct) when w.Read is "", else over
	// the product whose content hash is w.Read (see Revise), or, with
	// nothing written, a *quire.Stale naming StaleProduct.
	CommitProduct(ctx context.Context, w ProductWrite, rec *idempotency.Record) error
}

// ProductFields are the writable fields of a product in a request body.
// id and links are read-only: accepted and ignored.
type ProductFields struct {
	Name     *string      `json:"name"`
	Price    *quire.Money `json:"price"`
	Status   *Status      `json:"status"`
	AuthorID *quire.ID    `json:"author_id"`

	ID    any `json:"id"`
	Links any `json:"links"`
}

// Product validates f as a whole product, written by a client of API
// version v. Each invalid field is listed in the error.
func (f ProductFields) Product(v int) (*Product, error) {
	var errs []quire.FieldError
	bad := func(field, detail string) {
		errs = append(errs, quire.FieldError{Pointer: "/" + field, Detail: detail})
	}
	p := &Product{}
	if f.Name == nil {
		bad("name", "is required")
	} else if detail := checkName(*f.Name); detail != "" {
		bad("name", detail)
	} else {
		p.Name = strings.TrimSpace(*f.Name)
	}
	switch {
	case f.Price == nil:
		bad("price", "is required")
	case *f.Price < 1 || *f.Price > MaxPrice:
		bad("price", fmt.Sprintf("must be from 0.01 to %s", MaxPrice))
	default:
		p.Price = *f.Price
	}
	switch {
	case f.Status == nil:
		bad("status", "is required")
	case !f.Status.validIn(v):
		want := `must be "AVAILABLE", "DISCONTINUED" or "ARCHIVED"`
		if v < 2 {
			want = `must be "AVAILABLE" or "DISCONTINUED"`
		}
		bad("status", want)
	default:
		p.Status = *f.Status
	}
	switch {
	case f.AuthorID == nil:
		bad("author_id", "is required")
	case *f.AuthorID < 1:
		bad("author_id", "must be an author's id")
	default:
		p.AuthorID = *f.AuthorID
	}
	if errs != nil {
		return nil, quire.Invalid(errs...)
	}
	return p, nil
}

// AuthorFields are the writable fields of an author in a request body.
type AuthorFields struct {
	Name *string `json:"name"`

	ID    any `json:"id"`
	Links any `json:"links"`
}

// Author validates f as an author.
func (f AuthorFields) Author() (*Author, error) {
	switch {
	case f.Name == nil:
		return nil, quire.Invalid(quire.FieldError{Pointer: "/name", Detail: "is required"})
	case checkName(*f.Name) != "":
		return nil, quire.Invalid(quire.FieldError{Pointer: "/name", Detail: checkName(*f.Name)})
	}
	return &Author{Name: strings.TrimSpace(*f.Name)}, nil
}

func checkName(s string) string { return quire.CheckName(s, MaxNameLen) }

// NoProduct says a store's ENOTFOUND for the product id in the catalog's
// words; any other err stays as it is.
func NoProduct(err error, id quire.ID) error {
	return quire.Reword(err, quire.ENOTFOUND, "No product has the id %d.", id)
}

// NoAuthor says a store's ENOTFOUND for the author id in the catalog's
// words; any other err stays as it is.
func NoAuthor(err error, id quire.ID) error {
	return quire.Reword(err, quire.ENOTFOUND, "No author has the id %d.", id)
}

// NoSuchAuthor is the error for a product whose author_id names no author.
func NoSuchAuthor(id quire.ID) error {
	return quire.Invalid(quire.FieldError{Pointer: "/author_id", Detail: fmt.Sprintf("no author has the id %d", id)})
}
