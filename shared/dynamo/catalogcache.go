package dynamo

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/quire"
)

// CatalogCache configures the instance cache of a CatalogStore's reads:
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

// NewCachedCatalogStore returns a CatalogStore on db with the physical
// table names t whose reads go through an instance cache configured by c;
// with c.Staleness 0 it reads DynamoDB every time, as NewCatalogStore's.
// A write through the store (an admin's, or demo data's) makes its cache
// forget what it changed and every list at once, so the instance reads its
// own writes; the other instances see them after c.Staleness.
func NewCachedCatalogStore(db *dynamodb.Client, t TableNames, c CatalogCache) *CatalogStore {
	s := NewCatalogStore(db, t)
	if c.Staleness <= 0 {
		return s
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultCatalogCacheBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	s.cache = newRecent(c.Staleness, c.MaxBytes, c.Now)
	return s
}

// Keys of the catalog cache. Lists' keys start with listKeyPrefix: every
// write forgets them all.
const listKeyPrefix = "list/"

func productCacheKey(id quire.ID) string { return "product/" + id.String() }
func authorCacheKey(id quire.ID) string  { return "author/" + id.String() }

// forget makes the cache forget keys and every list. Without a cache, it
// does nothing.
func (s *CatalogStore) forget(keys ...string) {
	if s.cache != nil {
		s.cache.forget(listKeyPrefix, keys...)
	}
}

// products returns the products ids that exist, from the cache where it
// holds them and else from DynamoDB (see readProducts), and the time the
// oldest of them expires from the cache (zero without a cache).
func (s *CatalogStore) products(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, time.Time, error) {
	return cachedByID(ctx, s.cache, ids, productCacheKey, s.readProducts, productSize)
}

// authors returns the authors ids that exist, as products does.
func (s *CatalogStore) authors(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, time.Time, error) {
	return cachedByID(ctx, s.cache, ids, authorCacheKey, s.readAuthors, authorSize)
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
