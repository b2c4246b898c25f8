package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/quiretest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// catalogFixture is the demo catalog in fresh tables, with the stores of
// two functions: one whose cache is under test (its requests counted, its
// clock the test's), and another that writes around it.
type catalogFixture struct {
	tables  dynamo.TableNames
	counted *dynamodb.Client
	counter *dynamotest.Counter
	clock   *quiretest.Clock
	other   *dynamo.CatalogStore
}

const staleness = time.Second

func newCatalogFixture(t *testing.T) *catalogFixture {
	t.Helper()
	db, tables := dynamotest.New(t)
	f := &catalogFixture{tables: tables, counter: &dynamotest.Counter{}, clock: quiretest.NewClock(time.Now()), other: dynamo.NewCatalogStore(db, tables)}
	var err error
	if f.counted, err = dynamo.NewClient(dynamo.Config{Endpoint: dynamotest.Endpoint(t)}, f.counter.Option); err != nil {
		t.Fatal(err)
	}
	if err := demo.SeedCatalog(t.Context(), f.other); err != nil {
		t.Fatal(err)
	}
	return f
}

// cached returns a new instance's store, with an empty cache of maxBytes
// (0: the default).
func (f *catalogFixture) cached(maxBytes int) *cache.Catalog {
	return cache.NewCatalog(dynamo.NewCatalogStore(f.counted, f.tables), cache.CatalogCache{Staleness: staleness, MaxBytes: maxBytes, Now: f.clock.Now})
}

// ops returns the DynamoDB operations the cached stores made since the
// last call.
func (f *catalogFixture) ops() []string {
	ops, _ := f.counter.Take()
	return ops
}

// catalogRead is one of the catalog's shared reads, returning what it read.
type catalogRead struct {
	name string
	read func(context.Context, *cache.Catalog) (any, error)
	cold []string // the DynamoDB requests of a cold read
}

func catalogReads() []catalogRead {
	page := func(ids []catalog.Product, next quire.ID) any { return fmt.Sprint(ids, next) }
	return []catalogRead{
		{"landing", func(ctx context.Context, s *cache.Catalog) (any, error) {
			return s.Featured(ctx, catalog.MaxFeatured)
		}, []string{"Query", "BatchGetItem"}},
		{"a page of authors", func(ctx context.Context, s *cache.Catalog) (any, error) {
			as, next, err := s.Authors(ctx, catalog.ListQuery{Limit: 2})
			return fmt.Sprint(as, next), err
		}, []string{"Query", "BatchGetItem"}},
		{"an author", func(ctx context.Context, s *cache.Catalog) (any, error) {
			return s.Author(ctx, 1)
		}, []string{"GetItem"}},
		{"a page of products", func(ctx context.Context, s *cache.Catalog) (any, error) {
			ps, next, err := s.Products(ctx, catalog.ListQuery{Limit: 2})
			return page(ps, next), err
		}, []string{"Query", "BatchGetItem"}},
		{"a page of an author's books", func(ctx context.Context, s *cache.Catalog) (any, error) {
			ps, next, err := s.Products(ctx, catalog.ListQuery{Limit: 10, AuthorID: 2})
			return page(ps, next), err
		}, []string{"Query"}},
		{"a product", func(ctx context.Context, s *cache.Catalog) (any, error) {
			return s.Product(ctx, 1)
		}, []string{"GetItem"}},
		{"no such product", func(ctx context.Context, s *cache.Catalog) (any, error) {
			_, err := s.Product(ctx, 99)
			if quire.ErrorCode(err) == quire.ENOTFOUND {
				return "not found", nil
			}
			return nil, fmt.Errorf("product 99: %v, want ENOTFOUND", err)
		}, []string{"GetItem"}},
		{"products by id (a cart)", func(ctx context.Context, s *cache.Catalog) (any, error) {
			return s.ProductsByID(ctx, []quire.ID{1, 3, 5, 99})
		}, []string{"BatchGetItem"}},
	}
}

// TestCatalogCacheWarmReadsMakeNoRequest: every shared catalog read, read
// again within the staleness, answers the same from the instance's cache
// without a DynamoDB request.
func TestCatalogCacheWarmReadsMakeNoRequest(t *testing.T) {
	f := newCatalogFixture(t)
	for _, r := range catalogReads() {
		t.Run(r.name, func(t *testing.T) {
			s := f.cached(0)
			f.ops()
			cold, err := r.read(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(r.cold, f.ops()); diff != "" {
				t.Errorf("cold read's requests (-want +got):\n%s", diff)
			}
			f.clock.Add(staleness - time.Millisecond)
			warm, err := r.read(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			if ops := f.ops(); len(ops) != 0 {
				t.Errorf("warm read made requests: %v", ops)
			}
			if diff := cmp.Diff(cold, warm); diff != "" {
				t.Errorf("warm read differs (-cold +warm):\n%s", diff)
			}
		})
	}
}

// TestCatalogCacheSeesChangesAfterStaleness: a change written by another
// function (instance) is seen once the staleness has passed, not before;
// and a page made from products cached earlier expires with them.
func TestCatalogCacheSeesChangesAfterStaleness(t *testing.T) {
	f := newCatalogFixture(t)
	s := f.cached(0)
	ctx := t.Context()
	price := func() quire.Money {
		t.Helper()
		p, err := s.Product(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return p.Price
	}
	landing := func() []quire.ID {
		t.Helper()
		ps, err := s.Featured(ctx, catalog.MaxFeatured)
		if err != nil {
			t.Fatal(err)
		}
		var ids []quire.ID
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		return ids
	}
	pagePrice := func() quire.Money {
		t.Helper()
		ps, _, err := s.Products(ctx, catalog.ListQuery{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ps[0].Price
	}

	old := price()
	if diff := cmp.Diff([]quire.ID{1, 3, 5}, landing()); diff != "" {
		t.Fatalf("landing (-want +got):\n%s", diff)
	}
	f.clock.Add(staleness / 2)
	pagePrice() // a page of products 1 and 2: product 1 from the cache, half its staleness gone
	p1 := demo.Products()[0]
	p1.Price, p1.AuthorName = 2000, "Mary Shelley"
	if err := f.other.PutProduct(ctx, p1, 1); err != nil {
		t.Fatal(err)
	}
	p3 := demo.Products()[2]
	p3.Status, p3.AuthorName = catalog.StatusDiscontinued, "Jane Austen"
	if err := f.other.PutProduct(ctx, p3, 2); err != nil {
		t.Fatal(err)
	}

	f.clock.Add(staleness/2 - time.Millisecond)
	if got := price(); got != old {
		t.Errorf("within the staleness: price %s, want the cached %s", got, old)
	}
	if got := pagePrice(); got != old {
		t.Errorf("within the staleness: page price %s, want the cached %s", got, old)
	}
	if diff := cmp.Diff([]quire.ID{1, 3, 5}, landing()); diff != "" {
		t.Errorf("landing within the staleness (-want +got):\n%s", diff)
	}
	if ops := f.ops(); len(ops) != 5 { // the cold reads, and the page's Query and BatchGetItem of product 2
		t.Errorf("requests %v, want the first reads' 5", ops)
	}

	f.clock.Add(time.Millisecond)
	if got := price(); got != 2000 {
		t.Errorf("after the staleness: price %s, want 20.00", got)
	}
	if got := pagePrice(); got != 2000 {
		t.Errorf("after the staleness of the product it holds: page price %s, want 20.00", got)
	}
	if diff := cmp.Diff([]quire.ID{1, 5}, landing()); diff != "" {
		t.Errorf("landing after the staleness, book 3 discontinued (-want +got):\n%s", diff)
	}
}

// TestCatalogCacheReadsItsOwnWrites: a write through the store (an admin's
// request to the same instance) is read at once, by every read.
func TestCatalogCacheReadsItsOwnWrites(t *testing.T) {
	f := newCatalogFixture(t)
	s := f.cached(0)
	ctx := t.Context()
	for _, r := range catalogReads() {
		if _, err := r.read(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	p := demo.Products()[0]
	p.Price = 2000
	if err := replace(ctx, s, p, quire.Precondition{}); err != nil {
		t.Fatal(err)
	}
	aw := catalog.NewAuthor(catalog.Author{Name: "Virginia Woolf"}, time.Now())
	a := aw.Author
	if err := s.CommitAuthor(ctx, aw, nil); err != nil {
		t.Fatal(err)
	}
	_, author, err := s.Current(ctx, 0, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	w, err := catalog.NewProduct(catalog.Product{Name: "Orlando", Price: 1050, Status: catalog.StatusAvailable, AuthorID: a.ID}, author, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CommitProduct(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	book := w.Product

	// No time passes.
	if got, err := s.Product(ctx, 1); err != nil || got.Price != 2000 {
		t.Errorf("product 1: %+v %v, want price 20.00", got, err)
	}
	if got, err := s.ProductsByID(ctx, []quire.ID{1, book.ID}); err != nil || got[1].Price != 2000 || got[book.ID].Name != "Orlando" {
		t.Errorf("products by id: %+v %v, want the new price and the new book", got, err)
	}
	if got, err := s.Featured(ctx, catalog.MaxFeatured); err != nil || got[0].Price != 2000 {
		t.Errorf("landing: %+v %v, want book 1 at 20.00", got, err)
	}
	if got, _, err := s.Products(ctx, catalog.ListQuery{Limit: 2}); err != nil || got[0].Price != 2000 {
		t.Errorf("page of products: %+v %v, want book 1 at 20.00", got, err)
	}
	if got, _, err := s.Products(ctx, catalog.ListQuery{Limit: 10, AuthorID: 1}); err != nil || got[0].Price != 2000 {
		t.Errorf("page of the author's books: %+v %v, want book 1 at 20.00", got, err)
	}
	if got, err := s.Author(ctx, a.ID); err != nil || got.Name != "Virginia Woolf" {
		t.Errorf("new author: %+v %v", got, err)
	}
	if got, _, err := s.Authors(ctx, catalog.ListQuery{Limit: 100}); err != nil || len(got) != 4 {
		t.Errorf("authors: %+v %v, want 4", got, err)
	}
	if got, _, err := s.Products(ctx, catalog.ListQuery{Limit: 100}); err != nil || len(got) != 6 {
		t.Errorf("products: %+v %v, want 6", got, err)
	}

	// A refused write forgets the product too: the next read is current.
	p.Price = 2100
	if err := f.other.PutProduct(ctx, func() catalog.Product { q := p; q.AuthorName = "Mary Shelley"; return q }(), 1); err != nil {
		t.Fatal(err)
	}
	p.Price = 2200
	if err := replace(ctx, s, p, quire.Precondition{Match: []string{"stale"}}); quire.ErrorCode(err) != quire.EPRECONDITION {
		t.Fatalf("replace with a stale If-Match: %v, want EPRECONDITION", err)
	}
	if got, err := s.Product(ctx, 1); err != nil || got.Price != 2100 {
		t.Errorf("after a refused write: %+v %v, want the current price 21.00", got, err)
	}
}

// TestCatalogCacheOneRequestForConcurrentMisses: requests that miss the
// same keys at the same time make one DynamoDB request between them.
func TestCatalogCacheOneRequestForConcurrentMisses(t *testing.T) {
	db, tables := dynamotest.New(t)
	if err := demo.SeedCatalog(t.Context(), dynamo.NewCatalogStore(db, tables)); err != nil {
		t.Fatal(err)
	}
	// Every read takes 300 ms, so that the misses overlap.
	p, err := ddbfault.Start(dynamotest.Endpoint(t), 1,
		ddbfault.Rule{Fault: ddbfault.Delay, Operation: "GetItem", Delay: 300 * time.Millisecond},
		ddbfault.Rule{Fault: ddbfault.Delay, Operation: "BatchGetItem", Delay: 300 * time.Millisecond},
		ddbfault.Rule{Fault: ddbfault.Delay, Operation: "Query", Delay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	slow, err := dynamo.NewClient(dynamo.Config{Endpoint: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	s := cache.NewCatalog(dynamo.NewCatalogStore(slow, tables), cache.CatalogCache{Staleness: time.Hour})
	const each = 10
	var wg sync.WaitGroup
	for range each {
		wg.Go(func() {
			if p, err := s.Product(t.Context(), 1); err != nil || p.ID != 1 {
				t.Errorf("product 1: %+v %v", p, err)
			}
		})
		wg.Go(func() {
			if ps, err := s.ProductsByID(t.Context(), []quire.ID{3, 5}); err != nil || len(ps) != 2 {
				t.Errorf("products 3 and 5: %+v %v", ps, err)
			}
		})
		wg.Go(func() {
			if ps, _, err := s.Products(t.Context(), catalog.ListQuery{AuthorID: 2, Limit: 10}); err != nil || len(ps) != 2 {
				t.Errorf("author 2's books: %+v %v", ps, err)
			}
		})
	}
	wg.Wait()
	for _, op := range []string{"GetItem", "BatchGetItem", "Query"} {
		if n := p.Calls(op); n != 1 {
			t.Errorf("%d %s requests for %d concurrent reads, want 1", n, op, each)
		}
	}
}

// TestCatalogCacheMemoryBound: a cache bounded to a few products keeps the
// most recently used ones and reads the others again.
func TestCatalogCacheMemoryBound(t *testing.T) {
	f := newCatalogFixture(t)
	s := f.cached(2000) // about five products
	ctx := t.Context()
	for i := range 30 {
		p := catalog.Product{ID: quire.ID(100 + i), Name: fmt.Sprint("Book ", i), Price: 100, Status: catalog.StatusAvailable, AuthorID: 1, AuthorName: "Mary Shelley"}
		if err := f.other.PutProduct(ctx, p, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Product(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	f.ops()
	if _, err := s.ProductsByID(ctx, []quire.ID{129, 128, 127}); err != nil {
		t.Fatal(err)
	}
	if ops := f.ops(); len(ops) != 0 {
		t.Errorf("the most recently read products: requests %v, want none", ops)
	}
	for _, id := range []quire.ID{100, 110, 120} {
		if _, err := s.Product(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"GetItem", "GetItem", "GetItem"}, f.ops()); diff != "" {
		t.Errorf("products read long ago, beyond the bound, are read again (-want +got):\n%s", diff)
	}
}

// replace writes p's fields over the product p.ID in s, as PUT
// /admin/products/{id} does: it reads the product and its author through s,
// decides, and commits.
func replace(ctx context.Context, s catalog.Store, p catalog.Product, pre quire.Precondition) error {
	read, author, err := s.Current(ctx, p.ID, p.AuthorID)
	if err != nil {
		return err
	}
	w, err := catalog.Revise(read, author, p, 2, pre, time.Now())
	if err != nil {
		return err
	}
	return s.CommitProduct(ctx, w, nil)
}
