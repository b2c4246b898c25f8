package config

import (
	"context"
	"sync"
	"time"

	"github.com/quireapi/quire/shared/quire"
)

// Staleness bounds how old the head GET /config answers from may be: a
// function instance reads the head again once the head it holds was read
// (or written, by a PUT in the same instance) Staleness ago. So a document
// one instance stores is served by every other within Staleness of its
// commit, and by its own at once; and the head item, one partition key
// that every GET reads, takes at most one read per warm instance per
// Staleness, whatever the number of users: with Lambda's default of 1,000
// concurrent executions per account and Region, at most 1,000 read units
// a second, a third of the partition's 3,000. (A Lambda instance of a Go
// function serves one request at a time; the local gateway's concurrent
// requests may read the head together.)
//
// The head is read consistently, 1 unit: with the cache the read is rare,
// and a consistent read makes Staleness the whole bound, where an
// eventually consistent one (half a unit) would add a lag DynamoDB does
// not bound.
const Staleness = time.Second

// cache is what a function instance keeps of the stored document between
// requests: the head it last read or wrote, with when, and the compressed
// document that head names once it has been read or written. It holds one
// document, the current one, compressed as stored: a head with another
// hash drops the old document's bytes.
type cache struct {
	mu sync.Mutex
	// at is when the read of the head began, or the PUT that stored it:
	// the head was the stored head at some instant at or after at. Zero:
	// nothing is cached.
	at time.Time
	entry
	// puts counts the PUTs kept: a read begun before one keeps nothing,
	// so that the instance reads its own writes.
	puts uint64
}

// entry is a head, or the ENOTFOUND of a read that found none, with the
// compressed document the head names when it is known (nil otherwise).
// A head a PUT wrote has no generation (the store chose it), so it always
// comes with its document: nothing asks the store for its chunks.
type entry struct {
	head    Head
	gzip    []byte
	missing error
}

// lookup returns what the cache holds and the PUTs kept so far, and
// reports whether it is less than Staleness old at now.
func (c *cache) lookup(now time.Time) (e entry, puts uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entry, c.puts, !c.at.IsZero() && now.Sub(c.at) < Staleness
}

// keep caches e, what a read that began at found, unless the cache holds
// what a later read found, or a PUT kept since puts, and returns e with
// the compressed document cached for its head, if any.
func (c *cache) keep(e entry, at time.Time, puts uint64) entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e = c.same(e)
	if puts == c.puts && !at.Before(c.at) {
		c.at, c.entry = at, e
	}
	return e
}

// put caches e, what a PUT that began at stored.
func (c *cache) put(e entry, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.entry = at, c.same(e)
	c.puts++
}

// same returns e with the compressed document the cache holds when it
// holds e's: those bytes, read from the store, serve.
func (c *cache) same(e entry) entry {
	if !c.at.IsZero() && e.missing == nil && c.missing == nil && c.head.Hash == e.head.Hash && c.gzip != nil {
		e.gzip = c.gzip
	}
	return e
}

// fill caches gzip, the compressed document read from the store for head,
// if head is still the cached head and its document is not cached yet.
func (c *cache) fill(head Head, gzip []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.missing == nil && c.head.Hash == head.Hash && c.gzip == nil {
		c.gzip = gzip
	}
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// current returns the head of the stored document, as of at most
// Staleness ago, and its compressed document when the instance holds it,
// or ENOTFOUND. With fresh it reads the head whatever the cache holds.
func (h *Handlers) current(ctx context.Context, fresh bool) (entry, error) {
	now := h.now()
	e, puts, ok := h.cache.lookup(now)
	if ok && !fresh {
		return e, e.missing
	}
	head, err := h.Store.Head(ctx)
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return entry{}, err
	}
	err = quire.Reword(err, quire.ENOTFOUND, "No configuration document is stored yet; an admin stores one with PUT /admin/config.")
	e = h.cache.keep(entry{head: head, missing: err}, now, puts)
	return e, e.missing
}
