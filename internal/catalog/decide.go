package catalog

import (
	"errors"
	"fmt"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// What the commit of a catalog write may find changed since it was read:
// the What of its *quire.Stale error.
const (
	StaleID      = "id"      // a new author's or product's id, taken in the same millisecond
	StaleProduct = "product" // the product replaced
)

// An AuthorWrite is a decided new author, for the store to commit under an
// id no item has, with the event it publishes.
type AuthorWrite struct {
	Author Author
	Event  *quire.Event
}

// Authored is the data of an author.created event: the author's id and
// name, as the catalog shows them.
type Authored struct {
	AuthorID quire.ID `json:"author_id"`
	Name     string   `json:"name"`
}

// NewAuthor decides the new author a, stored at now under a new id, and
// its author.created event.
func NewAuthor(a Author, now time.Time) AuthorWrite {
	a.ID = quire.NewID(now)
	a.Hash = quire.ContentHash(&a)
	ev := quire.NewEvent(quire.EventAuthorCreated, "/authors/"+a.ID.String(), a.Hash, now, Authored{AuthorID: a.ID, Name: a.Name})
	return AuthorWrite{Author: a, Event: &ev}
}

// A ProductWrite is a decided write of a product, for the store to commit:
// the product as written, over the product whose content hash is Read (""
// for a new product, under an id no item has), and the event it publishes
// (nil for none: a write that changes nothing); with an archive that
// changes other fields too, AlsoChanged, the product.changed of those.
type ProductWrite struct {
	Product     Product
	Read        string
	Event       *quire.Event
	AlsoChanged *quire.Event
}

// Listed is the data of a product.created or product.changed event: the
// product's fields as written (its status as API version 2 names it), and,
// for a change, the names of the fields that changed.
type Listed struct {
	ProductID quire.ID    `json:"product_id"`
	Name      string      `json:"name"`
	Price     quire.Money `json:"price"`
	Status    Status      `json:"status"`
	AuthorID  quire.ID    `json:"author_id"`
	Changed   []string    `json:"changed,omitempty"`
}

// Archived is the data of a product.archived event: the product's id.
type Archived struct {
	ProductID quire.ID `json:"product_id"`
}

// NewProduct decides the new product p by author (nil when no author has
// p's author id), stored at now under a new id with its author's name, and
// its product.created event: EINVALID naming author_id when there is no
// such author.
func NewProduct(p Product, author *Author, now time.Time) (ProductWrite, error) {
	if author == nil {
		return ProductWrite{}, NoSuchAuthor(p.AuthorID)
	}
	p.ID, p.AuthorName = quire.NewID(now), author.Name
	p.Hash = quire.ContentHash(&p)
	return ProductWrite{Product: p, Event: productEvent(quire.EventProductCreated, p, now, listed(p, nil))}, nil
}

// Revise decides p's fields over the product read (nil when there is none
// with p's id), by author (nil when no author has p's author id), at now,
// and its events: product.archived when it archives the product, with
// product.changed naming the other fields it changed, if any; else
// product.changed naming what changed, and none when nothing did. It
// refuses a missing product (ENOTFOUND), a missing author (EINVALID naming
// author_id) and a product that fails pre (EPRECONDITION). p comes from a
// client of API version v: a status written as v shows the stored one
// keeps the stored one, so that a v1 client, to whom an archived product
// is DISCONTINUED, leaves it archived when it writes back what it read.
func Revise(read *Product, author *Author, p Product, v int, pre quire.Precondition, now time.Time) (ProductWrite, error) {
	switch {
	case read == nil:
		return ProductWrite{}, NoProduct(quire.NotFound("product "+p.ID.String()), p.ID)
	case author == nil:
		return ProductWrite{}, NoSuchAuthor(p.AuthorID)
	}
	if err := pre.Check(read.Hash); err != nil {
		return ProductWrite{}, err
	}
	if p.Status == read.Status.In(v) {
		p.Status = read.Status
	}
	p.AuthorName = author.Name
	p.Hash = quire.ContentHash(&p)
	w := ProductWrite{Product: p, Read: read.Hash}
	changed := changes(*read, p)
	if p.Status != StatusArchived || read.Status == StatusArchived {
		if len(changed) > 0 {
			w.Event = productEvent(quire.EventProductChanged, p, now, listed(p, changed))
		}
		return w, nil
	}
	w.Event = productEvent(quire.EventProductArchived, p, now, Archived{ProductID: p.ID})
	var others []string // what the archive changed besides the status
	for _, f := range changed {
		if f != "status" {
			others = append(others, f)
		}
	}
	if others != nil {
		w.AlsoChanged = productEvent(quire.EventProductChanged, p, now, listed(p, others))
	}
	return w, nil
}

// changes names the fields of a product's event that differ from read in p.
func changes(read, p Product) []string {
	var out []string
	for _, f := range []struct {
		name string
		diff bool
	}{
		{"name", read.Name != p.Name}, {"price", read.Price != p.Price},
		{"status", read.Status != p.Status}, {"author_id", read.AuthorID != p.AuthorID},
	} {
		if f.diff {
			out = append(out, f.name)
		}
	}
	return out
}

func listed(p Product, changed []string) Listed {
	return Listed{ProductID: p.ID, Name: p.Name, Price: p.Price, Status: p.Status, AuthorID: p.AuthorID, Changed: changed}
}

func productEvent(typ string, p Product, now time.Time, data any) *quire.Event {
	ev := quire.NewEvent(typ, "/products/"+p.ID.String(), p.Hash, now, data)
	return &ev
}

// Created is the error of a create's commit: a create that drew taken ids
// every time is an internal error.
func Created(err error) error {
	if _, stale := errors.AsType[*quire.Stale](err); stale {
		return fmt.Errorf("create catalog item: no free id after %d attempts: %w", quire.MaxAttempts, err)
	}
	return err
}
