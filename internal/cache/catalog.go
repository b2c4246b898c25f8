package cache

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// CatalogCache configures the instance cache of Catalog's reads:
// the landing page, pages of authors and products, and authors and
// products by id (carts and payments read the cart's products through
// it). Every user reads the same few of these keys, so without a cache
// their DynamoDB partitions take load that grows with users (3,000 read
// units a second per partition at most); with one, each key costs at most
// one read per warm instance per Staleness, whatever the users.
type CatalogCache struct {
	// Staleness is how old a cached read may be when it is served: an
	// entry lives this long after its read began. 0 turns the cache off.
	Staleness time.Duration
	// MaxBytes bounds the cache's size, about: the least recently used
	// entries go first. 0 means DefaultCatalogCacheBytes.
	MaxBytes int
	// Now is the cache's clock; nil means time.Now.
	Now func() time.Time
}

// DefaultCatalogStaleness is the deployed functions' staleness (and that
// of `make run`): a catalog change made through one function is seen by
// the others (each has its own instances, and so caches) within a second;
// through the same instance at once. A second keeps a key's load at one
// read a second per warm instance: with Lambda's default of 1,000
// concurrent executions per account and Region, at most 1,000 read units a
// second on a bestseller's partition (a third of its limit) for any
// number of users. A client told to retry after a second (Retry-After: 1)
// then reads what changed.
const DefaultCatalogStaleness = time.Second

// DefaultCatalogCacheBytes bounds a catalog cache by default: 8 MiB, about
// 20,000 products (or 400 full pages of 100), well within the 256 MB of
// the functions that read the catalog.
const DefaultCatalogCacheBytes = 8 << 20

// CatalogSource is the catalog as its store reads and writes it, without
// a cache: what Catalog reads through.
type CatalogSource interface {
	// ProductsByID and AuthorsByID read the products or authors ids that
	// exist, consistently, in one request (more when DynamoDB leaves keys
	// unprocessed).
	ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error)
	AuthorsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, error)
	// FeaturedIDs reads up to limit ids of featured books in rank order,
	// from the cursor from (nil: the first), and the cursor after them
	// (nil: no more).
	FeaturedIDs(ctx context.Context, from any, limit int) (ids []quire.ID, next any, err error)
	// AuthorIDs and ProductIDs read a page of ids in id order, and the id
	// the next page starts after, or 0.
	AuthorIDs(ctx context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error)
	ProductIDs(ctx context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error)
	// ProductsOfAuthor reads a page of q.AuthorID's books, whole.
	ProductsOfAuthor(ctx context.Context, q catalog.ListQuery) ([]catalog.Product, quire.ID, error)
	Current(ctx context.Context, id, authorID quire.ID) (*catalog.Product, *catalog.Author, error)
	CommitAuthor(ctx context.Context, w catalog.AuthorWrite, rec *idempotency.Record) error
	CommitProduct(ctx context.Context, w catalog.ProductWrite, rec *idempotency.Record) error
}

// Catalog is a catalog.Store whose reads go through an instance cache
// configured by CatalogCache (with Staleness 0, none: every read reads the
// source). A write through it (an admin's) makes the cache forget what it
// changed and every list at once, so the instance reads its own writes;
// the other instances see them after Staleness.
type Catalog struct {
	src   CatalogSource
	cache *recent // nil: no cache
}

// NewCatalog returns the catalog of src with the cache c configures.
func NewCatalog(src CatalogSource, c CatalogCache) *Catalog {
	cat := &Catalog{src: src}
	if c.Staleness <= 0 {
		return cat
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultCatalogCacheBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	cat.cache = newRecent(c.Staleness, c.MaxBytes, c.Now)
	return cat
}

// Keys of the catalog cache. Lists' keys start with listKeyPrefix: every
// write forgets them all.
const listKeyPrefix = "list/"

func productCacheKey(id quire.ID) string { return "product/" + id.String() }
func authorCacheKey(id quire.ID) string  { return "author/" + id.String() }

// forget makes the cache forget keys and every list. Without a cache, it
// does nothing.
func (c *Catalog) forget(keys ...string) {
	if c.cache != nil {
		c.cache.forget(listKeyPrefix, keys...)
	}
}

// products returns the products ids that exist, from the cache where it
// holds them and else from the source, and the time the oldest of them
// expires from the cache (zero without a cache).
func (c *Catalog) products(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, time.Time, error) {
	return cachedByID(ctx, c.cache, ids, productCacheKey, c.src.ProductsByID, productSize)
}

// authors returns the authors ids that exist, as products does.
func (c *Catalog) authors(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, time.Time, error) {
	return cachedByID(ctx, c.cache, ids, authorCacheKey, c.src.AuthorsByID, authorSize)
}

// Featured returns up to limit available featured books in rank order.
func (c *Catalog) Featured(ctx context.Context, limit int) ([]catalog.Product, error) {
	key := fmt.Sprintf("%sfeatured/%d", listKeyPrefix, limit)
	pg, err := cachedList(ctx, c.cache, key, func(ctx context.Context) (page[catalog.Product], time.Time, error) {
		ps, expires, err := c.readFeatured(ctx, limit)
		return page[catalog.Product]{items: ps}, expires, err
	}, productPageSize)
	return pg.items, err
}

// maxFeaturedKeys bounds the featured books the landing page looks at for
// available ones: limit ids at first, then 100 (a BatchGetItem's most) at
// a time, at most this many in all.
const maxFeaturedKeys = 1000

// maxBatchKeys is the most keys one BatchGetItem takes.
const maxBatchKeys = 100

// readFeatured reads the featured books' ids in rank order, limit at first,
// then 100 at a time, and their products, until it has limit available
// ones or has looked at maxFeaturedKeys. It returns the time the oldest
// cached product it used expires, if any.
func (c *Catalog) readFeatured(ctx context.Context, limit int) ([]catalog.Product, time.Time, error) {
	out := []catalog.Product{}
	var oldest time.Time
	if limit < 1 {
		return out, oldest, nil
	}
	var from any
	for seen, n := 0, min(limit, maxBatchKeys); len(out) < limit && seen < maxFeaturedKeys; n = maxBatchKeys {
		ids, next, err := c.src.FeaturedIDs(ctx, from, n)
		if err != nil {
			return nil, time.Time{}, err
		}
		ps, expires, err := c.products(ctx, ids)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("read featured books: %w", err)
		}
		oldest = earliest(oldest, expires)
		for _, id := range ids {
			if p, ok := ps[id]; ok && p.OnSale() && len(out) < limit {
				out = append(out, p)
			}
		}
		if seen += len(ids); next == nil {
			break
		}
		from = next
	}
	return out, oldest, nil
}

// Author returns the author id: ENOTFOUND when there is none.
func (c *Catalog) Author(ctx context.Context, id quire.ID) (*catalog.Author, error) {
	as, _, err := c.authors(ctx, []quire.ID{id})
	if err != nil {
		return nil, err
	}
	a, ok := as[id]
	if !ok {
		return nil, quire.NotFound("author " + id.String())
	}
	return &a, nil
}

// Product returns the product id: ENOTFOUND when there is none.
func (c *Catalog) Product(ctx context.Context, id quire.ID) (*catalog.Product, error) {
	ps, _, err := c.products(ctx, []quire.ID{id})
	if err != nil {
		return nil, err
	}
	p, ok := ps[id]
	if !ok {
		return nil, quire.NotFound("product " + id.String())
	}
	return &p, nil
}

// ProductsByID returns the products with ids that exist, reading those the
// cache does not hold from the source in one request.
func (c *Catalog) ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error) {
	ps, _, err := c.products(ctx, ids)
	return ps, err
}

// Authors returns a page of authors: the page's ids, then the authors the
// cache does not hold, in one request.
func (c *Catalog) Authors(ctx context.Context, q catalog.ListQuery) ([]catalog.Author, quire.ID, error) {
	key := fmt.Sprintf("%sauthors/%d/%d", listKeyPrefix, q.After, q.Limit)
	pg, err := cachedList(ctx, c.cache, key, func(ctx context.Context) (page[catalog.Author], time.Time, error) {
		ids, next, err := c.src.AuthorIDs(ctx, q)
		if err != nil {
			return page[catalog.Author]{}, time.Time{}, err
		}
		as, expires, err := c.authors(ctx, ids)
		return page[catalog.Author]{inOrder(ids, as), next}, expires, err
	}, authorPageSize)
	if err != nil {
		return nil, 0, fmt.Errorf("list authors: %w", err)
	}
	return pg.items, pg.next, nil
}

// Products returns a page of products: the page's ids, then the products
// the cache does not hold, in one request; or a page of one author's
// books, which the source reads whole.
func (c *Catalog) Products(ctx context.Context, q catalog.ListQuery) ([]catalog.Product, quire.ID, error) {
	key := fmt.Sprintf("%sproducts/%d/%d/%d", listKeyPrefix, q.AuthorID, q.After, q.Limit)
	pg, err := cachedList(ctx, c.cache, key, func(ctx context.Context) (page[catalog.Product], time.Time, error) {
		if q.AuthorID != 0 {
			ps, next, err := c.src.ProductsOfAuthor(ctx, q)
			return page[catalog.Product]{ps, next}, time.Time{}, err
		}
		ids, next, err := c.src.ProductIDs(ctx, q)
		if err != nil {
			return page[catalog.Product]{}, time.Time{}, err
		}
		ps, expires, err := c.products(ctx, ids)
		return page[catalog.Product]{inOrder(ids, ps), next}, expires, err
	}, productPageSize)
	if err != nil {
		return nil, 0, fmt.Errorf("list products: %w", err)
	}
	return pg.items, pg.next, nil
}

// inOrder returns the values of ids in byID, in the order of ids; an id
// without one (an item gone since its id was read) is left out.
func inOrder[T any](ids []quire.ID, byID map[quire.ID]T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		if v, ok := byID[id]; ok {
			out = append(out, v)
		}
	}
	return out
}

// Current reads the product and the author from the source, never from the
// cache, which forgets the product and every list: the write that reads
// them makes the instance's next reads current, whether it commits or is
// refused.
func (c *Catalog) Current(ctx context.Context, id, authorID quire.ID) (*catalog.Product, *catalog.Author, error) {
	if id != 0 {
		c.forget(productCacheKey(id))
	}
	return c.src.Current(ctx, id, authorID)
}

// CommitAuthor commits through the source; the cache forgets the author
// and every list.
func (c *Catalog) CommitAuthor(ctx context.Context, w catalog.AuthorWrite, rec *idempotency.Record) error {
	defer c.forget(authorCacheKey(w.Author.ID))
	return c.src.CommitAuthor(ctx, w, rec)
}

// CommitProduct commits through the source; the cache forgets the product
// and every list, whatever the outcome.
func (c *Catalog) CommitProduct(ctx context.Context, w catalog.ProductWrite, rec *idempotency.Record) error {
	defer c.forget(productCacheKey(w.Product.ID))
	return c.src.CommitProduct(ctx, w, rec)
}

// cachedByID returns the values of ids that exist, from c (nil: none)
// under key(id) where it holds them and else with read, called once for
// the ids nobody is reading, and the time the oldest expires from c.
func cachedByID[T any](ctx context.Context, c *recent, ids []quire.ID, key func(quire.ID) string,
	read func(context.Context, []quire.ID) (map[quire.ID]T, error), size func(T) int) (map[quire.ID]T, time.Time, error) {
	if c == nil {
		vs, err := read(ctx, ids)
		return vs, time.Time{}, err
	}
	keys := make([]string, len(ids))
	idOf := make(map[string]quire.ID, len(ids))
	for i, id := range ids {
		keys[i] = key(id)
		idOf[keys[i]] = id
	}
	vals, oldest, err := c.get(ctx, keys, func(ctx context.Context, missing []string) (map[string]loaded, error) {
		want := make([]quire.ID, len(missing))
		for i, k := range missing {
			want[i] = idOf[k]
		}
		vs, err := read(ctx, want)
		out := make(map[string]loaded, len(vs))
		for id, v := range vs {
			out[key(id)] = loaded{val: v, size: size(v)}
		}
		return out, err
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	out := make(map[quire.ID]T, len(vals))
	for k, v := range vals {
		out[idOf[k]] = v.(T)
	}
	return out, oldest, nil
}

// cachedList returns the page under key from c (nil: none) if it holds
// it, and else reads it with read, once for concurrent callers. read
// returns the time the oldest cached value it used expires (zero: none),
// which the page does not outlive. The items returned are the caller's
// own copy.
func cachedList[T any](ctx context.Context, c *recent, key string, read func(context.Context) (page[T], time.Time, error), size func(page[T]) int) (page[T], error) {
	if c == nil {
		pg, _, err := read(ctx)
		return pg, err
	}
	vals, _, err := c.get(ctx, []string{key}, func(ctx context.Context, _ []string) (map[string]loaded, error) {
		pg, expires, err := read(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]loaded{key: {val: pg, size: size(pg), expires: expires}}, nil
	})
	if err != nil {
		return page[T]{}, err
	}
	pg := vals[key].(page[T])
	return page[T]{slices.Clone(pg.items), pg.next}, nil
}

// page is a page of a list: its items, and the id the next page starts
// after, or 0.
type page[T any] struct {
	items []T
	next  quire.ID
}

// Sizes of cached values in bytes, about: the struct and its strings.
func productSize(p catalog.Product) int {
	return 128 + len(p.Name) + len(p.AuthorName) + len(p.Hash)
}

func authorSize(a catalog.Author) int { return 64 + len(a.Name) + len(a.Hash) }

func productPageSize(p page[catalog.Product]) int {
	n := 32
	for _, p := range p.items {
		n += productSize(p)
	}
	return n
}

func authorPageSize(p page[catalog.Author]) int {
	n := 32
	for _, a := range p.items {
		n += authorSize(a)
	}
	return n
}

// earliest returns the earlier of two expiry times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
