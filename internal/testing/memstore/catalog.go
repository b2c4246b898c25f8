package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// CatalogStore keeps authors and products. It implements
// cache.CatalogSource as dynamo.CatalogStore does, which cache.Catalog
// turns into a catalog.Store.
type CatalogStore struct{ db *DB }

// Catalog returns the database's catalog.
func (db *DB) Catalog() *CatalogStore { return &CatalogStore{db} }

// featured is a cursor of FeaturedIDs: the last book read.
type featured struct {
	rank int
	id   quire.ID
}

func (f featured) compare(g featured) int {
	return cmp.Or(cmp.Compare(f.rank, g.rank), cmp.Compare(f.id, g.id))
}

// FeaturedIDs returns up to limit ids of featured books in rank order,
// from the cursor from (nil: the first), and the cursor after them: nil
// when it found fewer than limit, as a DynamoDB Query with a limit.
func (s *CatalogStore) FeaturedIDs(_ context.Context, from any, limit int) ([]quire.ID, any, error) {
	if err := s.db.may(queried(routes.TableCatalog)); err != nil {
		return nil, nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	var all []featured
	for _, p := range s.db.products {
		if p.rank > 0 {
			all = append(all, featured{p.rank, p.ID})
		}
	}
	slices.SortFunc(all, featured.compare)
	ids := []quire.ID{}
	var last featured
	for _, f := range all {
		if from != nil && f.compare(from.(featured)) <= 0 {
			continue
		}
		if len(ids) == limit {
			break
		}
		ids, last = append(ids, f.id), f
	}
	if len(ids) < limit {
		return ids, nil, nil
	}
	return ids, last, nil
}

// ProductsByID returns the products ids that exist. It returns no error.
func (s *CatalogStore) ProductsByID(_ context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error) {
	if err := s.db.may(byID(len(ids))...); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	out := make(map[quire.ID]catalog.Product, len(ids))
	for _, id := range ids {
		if p, ok := s.db.products[id]; ok {
			out[id] = p.Product
		}
	}
	return out, nil
}

// AuthorsByID returns the authors ids that exist. It returns no error.
func (s *CatalogStore) AuthorsByID(_ context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, error) {
	if err := s.db.may(byID(len(ids))...); err != nil {
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	out := make(map[quire.ID]catalog.Author, len(ids))
	for _, id := range ids {
		if a, ok := s.db.authors[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

// AuthorIDs returns a page of authors' ids in id order, and the id the next
// page starts after, or 0. It returns no error.
func (s *CatalogStore) AuthorIDs(_ context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error) {
	if err := s.db.may(queried(routes.TableCatalog)); err != nil {
		return nil, 0, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	ids, next := page(slices.Sorted(maps.Keys(s.db.authors)), same, q.After, q.Limit)
	return ids, next, nil
}

// ProductIDs returns a page of products' ids, as AuthorIDs does.
func (s *CatalogStore) ProductIDs(_ context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error) {
	if err := s.db.may(queried(routes.TableCatalog)); err != nil {
		return nil, 0, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	ids, next := page(slices.Sorted(maps.Keys(s.db.products)), same, q.After, q.Limit)
	return ids, next, nil
}

func same(id quire.ID) quire.ID { return id }

// byID is how package dynamo reads n catalog items by id: nothing for none,
// one GetItem for one, one BatchGetItem for more.
func byID(n int) []dynamo.Access {
	switch n {
	case 0:
		return nil
	case 1:
		return []dynamo.Access{on("GetItem", routes.TableCatalog)}
	}
	return []dynamo.Access{on("BatchGetItem", routes.TableCatalog)}
}

// ProductsOfAuthor returns a page of q.AuthorID's books in id order. It
// returns no error.
func (s *CatalogStore) ProductsOfAuthor(_ context.Context, q catalog.ListQuery) ([]catalog.Product, quire.ID, error) {
	if err := s.db.may(queried(routes.TableCatalog)); err != nil {
		return nil, 0, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	var all []catalog.Product
	for _, p := range s.db.products {
		if p.AuthorID == q.AuthorID {
			all = append(all, p.Product)
		}
	}
	slices.SortFunc(all, func(a, b catalog.Product) int { return cmp.Compare(a.ID, b.ID) })
	ps, next := page(all, func(p catalog.Product) quire.ID { return p.ID }, q.After, q.Limit)
	return ps, next, nil
}

// Current returns the product id (none when 0) and the author authorID as
// stored: nil for one that does not exist. It returns no error.
func (s *CatalogStore) Current(_ context.Context, id, authorID quire.ID) (*catalog.Product, *catalog.Author, error) {
	read := byID(1) // the author
	if id != 0 {
		read = byID(2) // and the product
	}
	if err := s.db.may(read...); err != nil {
		return nil, nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	var p *catalog.Product
	var a *catalog.Author
	if stored, ok := s.db.products[id]; ok && id != 0 {
		v := stored.Product
		p = &v
	}
	if stored, ok := s.db.authors[authorID]; ok {
		a = &stored
	}
	return p, a, nil
}

// CommitAuthor stores the new author of w and its event with rec, under
// an id no author has: a *quire.Stale naming catalog.StaleID,
// idempotency.ErrRaced.
func (s *CatalogStore) CommitAuthor(_ context.Context, w catalog.AuthorWrite, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	a := w.Author
	a.Hash = quire.ContentHash(&a)
	var t tx
	t.add(catalog.StaleID, on("PutItem", routes.TableCatalog), func() bool { _, taken := s.db.authors[a.ID]; return !taken }, func() { s.db.authors[a.ID] = a })
	t.publish(s.db, w.Event)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("create catalog item %d: %w", a.ID, err)
	}
	return nil
}

// CommitProduct stores w and its event: a new product with rec, under an id no product has (a *quire.Stale naming
// catalog.StaleID), when w.Read is ""; else its fields over the product
// whose content hash is w.Read (a *quire.Stale naming
// catalog.StaleProduct), keeping its rank.
func (s *CatalogStore) CommitProduct(_ context.Context, w catalog.ProductWrite, rec *idempotency.Record) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	p, t := w.Product, tx{}
	if w.Read == "" {
		p.Hash = quire.ContentHash(&p)
		t.add(catalog.StaleID, on("PutItem", routes.TableCatalog), func() bool { return s.db.products[p.ID] == nil }, func() { s.db.products[p.ID] = &product{Product: p} })
	} else {
		t.add(catalog.StaleProduct, on("UpdateItem", routes.TableCatalog), func() bool { cur := s.db.products[p.ID]; return cur != nil && cur.Hash == w.Read }, func() {
			s.db.products[p.ID].Product = p
		})
		rec = nil // a PUT takes no idempotency key
	}
	t.publish(s.db, w.Event)
	t.publish(s.db, w.AlsoChanged)
	if err := s.db.commit(&t, rec); err != nil {
		return fmt.Errorf("commit product %d: %w", p.ID, err)
	}
	return nil
}

// PutAuthor stores a, replacing any author with its id, for demo data. It
// returns no error.
func (s *CatalogStore) PutAuthor(_ context.Context, a catalog.Author) error {
	if err := s.db.may(on("PutItem", routes.TableCatalog)); err != nil {
		return err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	a.Hash = quire.ContentHash(&a)
	s.db.authors[a.ID] = a
	return nil
}

// PutProduct stores p, replacing any product with its id, for demo data; a
// rank above 0 features it. It returns no error.
func (s *CatalogStore) PutProduct(_ context.Context, p catalog.Product, rank int) error {
	if err := s.db.may(on("PutItem", routes.TableCatalog)); err != nil {
		return err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	p.Hash = quire.ContentHash(&p)
	s.db.products[p.ID] = &product{Product: p, rank: max(rank, 0)}
	return nil
}
