package config_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/quiretest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func newClock() *quiretest.Clock {
	return quiretest.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
}

// clocked returns opts with the config function built on clk, as
// service.Configuration builds it, on the configuration opts leave: it
// serves before any of opts' Functions wrap it.
func clocked(t *testing.T, clk *quiretest.Clock, opts ...servicetest.Option) []servicetest.Option {
	t.Helper()
	var cfg service.Config
	build := servicetest.Option{Functions: func(fns map[string]apigw.Handler) {
		s, err := cfg.OpenStores(routes.GroupConfig)
		if err != nil {
			t.Fatal(err)
		}
		h := &httpapi.Config{Store: &cache.Config{Store: s.Config, Now: clk.Now}}
		router, err := rest.NewRouter(routes.GroupConfig, h.Routes(), nil, &access.Callers{Accounts: s.Callers, Staleness: time.Hour}) // a customer read once
		if err != nil {
			t.Fatal(err)
		}
		fns[routes.GroupConfig] = apigw.NewHandler(router, nil)
	}}
	last := servicetest.Option{Config: func(c *service.Config) { cfg = *c }}
	return append(append([]servicetest.Option{build}, opts...), last)
}

// putElsewhere stores doc as another function instance does: through
// another store on the same tables, around the test's counters and fault
// proxy. It returns the document's ETag (v1, identity).
func putElsewhere(t *testing.T, api *servicetest.API, doc string) string {
	t.Helper()
	d, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Put(context.Background(), api.Stores.Config, d, quire.Precondition{}, `"etag"`); err != nil {
		t.Fatal(err)
	}
	return rest.Tag(d.Hash, 1, false)
}

// requests returns what the instance's DynamoDB requests since the last
// call were: "GetItem,BatchGetItem", or "" for none.
func (e *env) requests() string {
	ops, _ := e.reads.Take()
	return strings.Join(ops, ",")
}

// wantDoc fails unless r is a 200 of doc with the ETag tag (of doc's
// identity representation): gzip-compressed as stored when gz.
func wantDoc(t *testing.T, r servicetest.Response, doc, tag string, gz bool) {
	t.Helper()
	body, wantTag := r.Body, tag
	if gz {
		d, err := config.Parse([]byte(doc)) // the bytes a PUT of doc stores
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.Get("Content-Encoding") != "gzip" || r.Body != string(d.Gzip) {
			t.Fatalf("Content-Encoding %q, %d bytes; want the %d gzip bytes stored", r.Header.Get("Content-Encoding"), len(r.Body), len(d.Gzip))
		}
		wantTag = strings.TrimSuffix(tag, `"`) + `-gzip"`
		body = gunzip(t, r.Body)
	} else if ce := r.Header.Get("Content-Encoding"); ce != "" {
		t.Errorf("Content-Encoding %q without gzip asked for", ce)
	}
	if r.StatusCode != http.StatusOK || body != doc || r.Header.Get("ETag") != wantTag {
		t.Fatalf("GET /config = %d, ETag %s, %d bytes; want 200, %s, the %d bytes of the document", r.StatusCode, r.Header.Get("ETag"), len(body), wantTag, len(doc))
	}
}

// A warm instance serving an unchanged document reads its head at most:
// nothing within config.Staleness of its last read, one GetItem after;
// never a chunk, for any representation, and a 304 likewise.
func TestWarmInstanceReadsTheHeadAtMost(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	doc := random(600_000) // 2 chunks
	tag := putElsewhere(t, e.api, doc)
	wantDoc(t, e.customer.Do(t, "GET", "/config", ""), doc, tag, false)
	if got := e.requests(); got != "GetItem,GetItem,BatchGetItem" {
		t.Fatalf("a cold instance's GET made the requests %q; want the caller's account's, the head's and the chunks'", got)
	}
	for _, gz := range []bool{false, true} {
		for _, c := range []struct {
			wait time.Duration
			want string
		}{{0, ""}, {config.Staleness - time.Nanosecond, ""}, {time.Nanosecond, "GetItem"}, {0, ""}, {time.Hour, "GetItem"}} {
			e.clock.Add(c.wait)
			header := []string{"Accept-Encoding", map[bool]string{true: "gzip"}[gz]}
			wantDoc(t, e.customer.Do(t, "GET", "/config", "", header...), doc, tag, gz)
			if got := e.requests(); got != c.want {
				t.Errorf("GET (gzip %t) %v later: requests %q, want %q", gz, c.wait, got, c.want)
			}
			r := e.customer.Do(t, "GET", "/config", "", append(header, "If-None-Match", tag+`, `+strings.TrimSuffix(tag, `"`)+`-gzip"`)...)
			if r.StatusCode != http.StatusNotModified || r.Body != "" {
				t.Errorf("conditional GET = %d with %d bytes, want 304", r.StatusCode, len(r.Body))
			}
			if got := e.requests(); got != "" {
				t.Errorf("a 304 right after a GET made the requests %q", got)
			}
		}
	}
}

// A document another instance stores is served within config.Staleness
// of its commit, with its own ETag; until then, the one before, whole.
func TestChangeElsewhereIsServedWithinStaleness(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	first := document(100_000, "first; ")
	tag1 := putElsewhere(t, e.api, first)
	wantDoc(t, e.customer.Do(t, "GET", "/config", ""), first, tag1, false)

	second := random(600_000)
	tag2 := putElsewhere(t, e.api, second)
	e.requests()
	e.clock.Add(config.Staleness - time.Nanosecond)
	wantDoc(t, e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", "gzip"), first, tag1, true)
	if r := e.customer.Do(t, "GET", "/config", "", "If-None-Match", tag1); r.StatusCode != http.StatusNotModified {
		t.Errorf("revalidating within the staleness = %d, want 304", r.StatusCode)
	}
	if got := e.requests(); got != "" {
		t.Errorf("within the staleness: requests %q, want none", got)
	}

	e.clock.Add(time.Nanosecond)
	wantDoc(t, e.customer.Do(t, "GET", "/config", "", "If-None-Match", tag1), second, tag2, false)
	if got := e.requests(); got != "GetItem,BatchGetItem" {
		t.Errorf("after the staleness: requests %q, want the head's and the new chunks'", got)
	}
	wantDoc(t, e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", "gzip"), second, tag2, true)
	if got := e.requests(); got != "" {
		t.Errorf("the new document held: requests %q, want none", got)
	}
}

// The instance that stores a document serves it at once, without reading
// it back, and its head read later finds the chunks need no read either.
func TestPutIsServedAtOnceByItsInstance(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	first := `{"v":1}`
	tag1 := e.put(t, first, http.StatusCreated)
	wantDoc(t, e.customer.Do(t, "GET", "/config", ""), first, tag1, false)

	second := random(600_000)
	tag2 := e.put(t, second, http.StatusNoContent)
	e.requests()
	wantDoc(t, e.customer.Do(t, "GET", "/config", "", "If-None-Match", tag1), second, tag2, false)
	wantDoc(t, e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", "gzip"), second, tag2, true)
	if got := e.requests(); got != "" {
		t.Errorf("GETs after the instance's own PUT: requests %q, want none", got)
	}
	e.clock.Add(config.Staleness)
	wantDoc(t, e.customer.Do(t, "GET", "/config", ""), second, tag2, false)
	if got := e.requests(); got != "GetItem" {
		t.Errorf("GET once the head is stale: requests %q, want the head's only", got)
	}
}

// A head held within its staleness may name a document another instance
// has replaced since, whose chunks are gone: the GET reads the head again
// at once and answers the new document, rather than a 503.
func TestReplacedWhileHeldReadsTheHeadAgain(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	tag1 := putElsewhere(t, e.api, `{"v":1}`)
	if r := e.customer.Do(t, "GET", "/config", "", "If-None-Match", tag1); r.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional GET = %d, want 304", r.StatusCode)
	}
	if got := e.requests(); got != "GetItem,GetItem" {
		t.Fatalf("a cold instance's 304 made the requests %q; want the caller's account's and the head's only", got)
	}
	second := random(500_000)
	tag2 := putElsewhere(t, e.api, second)
	wantDoc(t, e.customer.Do(t, "GET", "/config", ""), second, tag2, false)
	if got := e.requests(); strings.Count(","+got+",", ",GetItem,") != 1 || !strings.HasSuffix(got, ",GetItem,BatchGetItem") {
		t.Errorf("requests %q; want the old chunks' reads, then one head read and the new chunks'", got)
	}
}

// Concurrent GETs while the instance fills its cache, and while the
// document changes under them, each answer one document whole, with that
// document's ETag; once filled, the cache serves without a request.
func TestConcurrentGetsWhileTheCacheFills(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	first, second := random(100_000), random(300_000)
	var mu sync.Mutex
	tags := map[string]string{first: putElsewhere(t, e.api, first)} // by body
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for range 4 {
				gz := i%2 == 1
				r := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", map[bool]string{true: "gzip"}[gz])
				tag, body := strings.TrimSuffix(r.Header.Get("ETag"), `-gzip"`), r.Body
				if gz {
					tag += `"`
					body = gunzip(t, r.Body)
				}
				mu.Lock()
				want, ok := tags[body]
				mu.Unlock()
				if r.StatusCode != http.StatusOK {
					t.Errorf("GET = %d %.200s", r.StatusCode, r.Body)
				} else if !ok || tag != want {
					t.Errorf("GET (gzip %t) = ETag %s with %d bytes: not one document whole with its tag", gz, r.Header.Get("ETag"), len(body))
				}
			}
		})
		if i == 6 { // half of them started: the document changes, and the head held ages
			tag := putElsewhere(t, e.api, second)
			mu.Lock()
			tags[second] = tag
			mu.Unlock()
			e.clock.Add(config.Staleness)
		}
	}
	wg.Wait()
	e.clock.Add(config.Staleness)
	e.requests()
	for _, gz := range []bool{false, true} {
		wantDoc(t, e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", map[bool]string{true: "gzip"}[gz]), second, tags[second], gz)
	}
	if got := e.requests(); got != "GetItem" && got != "GetItem,BatchGetItem" {
		t.Errorf("after the concurrent GETs: requests %q; want the head's, and the chunks' at most once", got)
	}
}

// liveHeap returns the bytes the Go heap holds once collected.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The instance holds one document, compressed as stored, and no more:
// after serving one 2 MiB document after another, its heap holds about
// the compressed size of the current one more than with a small one.
func TestInstanceHoldsOneDocument(t *testing.T) {
	// It counts DynamoDB's requests: on DynamoDB only.
	e := newEnv(t, servicetest.Option{DynamoDB: true})
	putElsewhere(t, e.api, `{"small":true}`)
	e.stored(t)
	base := liveHeap()
	// serve stores a new 2 MiB document, by the instance's PUT or another
	// instance's, has it served, and returns its compressed size.
	serve := func(own bool) int {
		doc := random(config.MaxBytes)
		if own {
			e.put(t, doc, http.StatusNoContent)
		} else {
			putElsewhere(t, e.api, doc)
			e.clock.Add(config.Staleness)
		}
		if got := e.stored(t); got != doc {
			t.Fatalf("GET answers %d bytes, not the %d stored", len(got), len(doc))
		}
		return len(storedGzip(t, e.api))
	}
	for i, own := range []bool{false, true, false, true} {
		size := serve(own)
		// A server goroutine may still hold the request it has answered
		// for a moment (on a busy machine, as in make test): what counts is
		// what the heap settles to.
		held := liveHeap() - base
		for deadline := time.Now().Add(2 * time.Second); held > int64(size)+256<<10 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			held = liveHeap() - base
		}
		t.Logf("after document %d (stored by this instance: %t), %d bytes compressed: the heap holds %d bytes more", i+1, own, size, held)
		if held > int64(size)+256<<10 {
			t.Errorf("document %d: the heap holds %d bytes more than with a small document; want about its %d compressed bytes", i+1, held, size)
		}
	}
}
