package catalog_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/quire"
)

// Product writes are decided with no store: a missing product or author,
// a failed precondition, what a v1 client's DISCONTINUED means for an
// archived book, the product as written, with its author's name and
// content hash, and its event: what changed, an archiving, or none.
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
		event  string   // the event's type, "" for none
		fields []string // the fields a product.changed names
	}{
		{name: "a new price", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable), status: catalog.StatusAvailable,
			event: quire.EventProductChanged, fields: []string{"price"}},
		{name: "over the ETag read", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable),
			pre: quire.Precondition{Match: []string{stored(catalog.StatusAvailable).Hash}}, status: catalog.StatusAvailable,
			event: quire.EventProductChanged, fields: []string{"price"}},
		{name: "nothing changed", read: stored(catalog.StatusAvailable), author: shelley, status: catalog.StatusAvailable,
			p: catalog.Product{ID: 7, Name: "Frankenstein", Price: 12_99, Status: catalog.StatusAvailable, AuthorID: 1}},
		{name: "v2 archives, at a new price", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusArchived), status: catalog.StatusArchived,
			event: quire.EventProductArchived, fields: []string{"price"}},
		{name: "v2 archives alone", read: stored(catalog.StatusAvailable), author: shelley, status: catalog.StatusArchived,
			p: catalog.Product{ID: 7, Name: "Frankenstein", Price: 12_99, Status: catalog.StatusArchived, AuthorID: 1}, event: quire.EventProductArchived},
		{name: "over a changed product", read: stored(catalog.StatusAvailable), author: shelley, p: sent(catalog.StatusAvailable),
			pre: quire.Precondition{Match: []string{"older"}}, code: quire.EPRECONDITION},
		{name: "a missing product", author: shelley, p: sent(catalog.StatusAvailable), code: quire.ENOTFOUND},
		{name: "a missing author", read: stored(catalog.StatusAvailable), p: sent(catalog.StatusAvailable), code: quire.EINVALID},
		{name: "v1 writes back DISCONTINUED over ARCHIVED", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusDiscontinued), v1: true, status: catalog.StatusArchived, event: quire.EventProductChanged, fields: []string{"price"}},
		{name: "v2 unarchives to DISCONTINUED", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusDiscontinued), status: catalog.StatusDiscontinued, event: quire.EventProductChanged, fields: []string{"price", "status"}},
		{name: "v1 makes an archived book available", read: stored(catalog.StatusArchived), author: shelley,
			p: sent(catalog.StatusAvailable), v1: true, status: catalog.StatusAvailable, event: quire.EventProductChanged, fields: []string{"price", "status"}},
		{name: "v1 discontinues an available book", read: stored(catalog.StatusAvailable), author: shelley,
			p: sent(catalog.StatusDiscontinued), v1: true, status: catalog.StatusDiscontinued, event: quire.EventProductChanged, fields: []string{"price", "status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := 2
			if tc.v1 {
				v = 1
			}
			at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			got, err := catalog.Revise(tc.read, tc.author, tc.p, v, tc.pre, at)
			if quire.ErrorCode(err) != tc.code {
				t.Fatalf("Revise = %v, want %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			want := tc.p
			want.Status, want.AuthorName = tc.status, "Mary Shelley"
			want.Hash = quire.ContentHash(&want)
			if diff := cmp.Diff(want, got.Product); diff != "" {
				t.Errorf("product (-want +got):\n%s", diff)
			}
			if got.Read != tc.read.Hash {
				t.Errorf("written over %q, want the hash read, %q", got.Read, tc.read.Hash)
			}
			switch {
			case tc.event == "" && got.Event != nil:
				t.Errorf("a write that changes nothing publishes %+v", *got.Event)
			case tc.event == quire.EventProductArchived:
				wantEvent(t, got.Event, tc.event, "/products/7", at, catalog.Archived{ProductID: 7})
				if tc.fields == nil && got.AlsoChanged != nil {
					t.Errorf("an archive alone publishes %+v too", *got.AlsoChanged)
				} else if tc.fields != nil {
					wantEvent(t, got.AlsoChanged, quire.EventProductChanged, "/products/7", at, catalog.Listed{
						ProductID: 7, Name: want.Name, Price: want.Price, Status: want.Status, AuthorID: 1, Changed: tc.fields})
				}
			case tc.event != "":
				wantEvent(t, got.Event, tc.event, "/products/7", at, catalog.Listed{
					ProductID: 7, Name: want.Name, Price: want.Price, Status: want.Status, AuthorID: 1, Changed: tc.fields})
			}
		})
	}

	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := catalog.Product{Name: "Orlando", Price: 10_50, Status: catalog.StatusAvailable, AuthorID: 1}
	if _, err := catalog.NewProduct(p, nil, now); quire.ErrorCode(err) != quire.EINVALID {
		t.Errorf("a new product of no author: %v, want EINVALID", err)
	}
	w, err := catalog.NewProduct(p, shelley, now)
	if got := w.Product; err != nil || got.ID <= 0 || got.AuthorName != "Mary Shelley" || got.Hash != quire.ContentHash(&got) || w.Read != "" {
		t.Errorf("NewProduct = %+v, %v", w, err)
	}
	wantEvent(t, w.Event, quire.EventProductCreated, "/products/"+w.Product.ID.String(), now, catalog.Listed{
		ProductID: w.Product.ID, Name: "Orlando", Price: 10_50, Status: catalog.StatusAvailable, AuthorID: 1})
	aw := catalog.NewAuthor(catalog.Author{Name: "Virginia Woolf"}, now)
	if a := aw.Author; a.ID <= 0 || a.Hash != quire.ContentHash(&a) {
		t.Errorf("NewAuthor = %+v", a)
	}
	wantEvent(t, aw.Event, quire.EventAuthorCreated, "/authors/"+aw.Author.ID.String(), now,
		catalog.Authored{AuthorID: aw.Author.ID, Name: "Virginia Woolf"})
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

// wantEvent fails the test unless ev is the event typ of subject at at,
// carrying data, with an id of 22 characters.
func wantEvent(t *testing.T, ev *quire.Event, typ, subject string, at time.Time, data any) {
	t.Helper()
	if ev == nil {
		t.Fatalf("no event, want %s", typ)
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != typ || ev.Subject != subject || !ev.Time.Equal(at) || string(ev.Data) != string(b) || len(ev.ID) != quire.HashLen {
		t.Errorf("event %s %s at %v: %s (id %q); want %s %s at %v: %s", ev.Type, ev.Subject, ev.Time, ev.Data, ev.ID, typ, subject, at, b)
	}
}
