package catalog_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/quire"
)

// Product writes are decided with no store: a missing product or author,
// a failed precondition, what a v1 client's DISCONTINUED means for an
// archived book, and the product as written, with its author's name and
// content hash.
func TestProductDecisions(t *testing.T) {
	shelley := &catalog.Author{ID: 1, Name: "Mary Shelley"}
	stored := func(s catalog.Status) *catalog.Product {
		p := &catalog.Product{ID: 7, Name: "Frankenstein", Price: 12_99, Status: s, AuthorID: 1, AuthorName: "Mary Shelley"}
		p.Hash = quire.ContentHash(p)
		return p
	}
	sent := func(s catalog.Status) catalog.Product {
		return catalog.Product{ID: 7, Name: "Frankenstein", Price: 13_50, Status: s, AuthorID: 1}
	}
	for _, tc := range []struct {
		name   string
		read   *catalog.Product
		author *catalog.Author
		p      catalog.Product
		v1     bool // a v1 client, to whom ARCHIVED is DISCONTINUED
		pre    quire.Precondition
		code   string
		status catalog.Status
	}{
		{name: "a new price", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable), status: catalog.StatusAvailable},
		{name: "over the ETag read", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable),
			pre: quire.Precondition{Match: []string{stored(catalog.StatusAvailable).Hash}}, status: catalog.StatusAvailable},
		{name: "over a changed product", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable),
			pre: quire.Precondition{Match: []string{"older"}}, code: quire.EPRECONDITION},
		{name: "a missing product", author: shelley, p: sent(catalog.StatusAvailable), code: quire.ENOTFOUND},
		{name: "a missing author", read: stored(catalog.StatusAvailable), p: sent(catalog.StatusAvailable), code: quire.EINVALID},
		{name: "v1 writes back DISCONTINUED over ARCHIVED", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusDiscontinued), v1: true, status: catalog.StatusArchived},
		{name: "v2 unarchives to DISCONTINUED", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusDiscontinued), status: catalog.StatusDiscontinued},
		{name: "v1 makes an archived book available", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusAvailable), v1: true, status: catalog.StatusAvailable},
		{name: "v1 discontinues an available book", read: stored(catalog.StatusAvailable), author: shelley,
			p: sent(catalog.StatusDiscontinued), v1: true, status: catalog.StatusDiscontinued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := 2
			if tc.v1 {
				v = 1
			}
			got, err := catalog.Revise(tc.read, tc.author, tc.p, v, tc.pre)
			if quire.ErrorCode(err) != tc.code {
				t.Fatalf("Revise = %v, want %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			want := tc.p
			want.Status, want.AuthorName = tc.status, "Mary Shelley"
			want.Hash = quire.ContentHash(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("product (-want +got):\n%s", diff)
			}
		})
	}

	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := catalog.Product{Name: "Orlando", Price: 10_50, Status: catalog.StatusAvailable, AuthorID: 1}
	if _, err := catalog.NewProduct(p, nil, now); quire.ErrorCode(err) != quire.EINVALID {
		t.Errorf("a new product of no author: %v, want EINVALID", err)
	}
	got, err := catalog.NewProduct(p, shelley, now)
	if err != nil || got.ID <= 0 || got.AuthorName != "Mary Shelley" || got.Hash != quire.ContentHash(&got) {
		t.Errorf("NewProduct = %+v, %v", got, err)
	}
	if a := catalog.NewAuthor(catalog.Author{Name: "Virginia Woolf"}, now); a.ID <= 0 || a.Hash != quire.ContentHash(&a) {
		t.Errorf("NewAuthor = %+v", a)
	}
}

// Only an available book is on sale, and so featured on the landing page.
func TestOnSale(t *testing.T) {
	for s, want := range map[catalog.Status]bool{
		catalog.StatusAvailable: true, catalog.StatusDiscontinued: false, catalog.StatusArchived: false,
	} {
		if got := (catalog.Product{Status: s}).OnSale(); got != want {
			t.Errorf("a %s book on sale: %v, want %v", s, got, want)
		}
	}
}
