// Package cache keeps, for a function instance, what its requests read
// again and again: it wraps a store's interface, so that the handlers and
// the store know nothing of it, and the wiring chooses it.
package cache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
)

// Config is a config.Store that keeps, for the function instance, the head
// it last read or wrote and the current document, compressed as stored:
// Head reads the store's head only when the one held was read (or written)
// config.Staleness ago, Gzip reads the chunks only of a document it does
// not hold, and Commit holds the document it stored at once, so that its
// instance serves it to the next GET. It holds one document, the current
// one: a head with another hash drops the old document's bytes, at most
// about 2 MiB compressed (1.7 MB for 2 MiB of random ASCII). Current, which
// writes decide on, always reads the store.
type Config struct {
	Store config.Store
	// Now is the clock that dates the head held; nil is time.Now. Tests
	// set it to move past config.Staleness without waiting.
	Now func() time.Time

	mu sync.Mutex
	// at is when the read of the head began, or the commit that stored
	// it: the head was the stored head at some instant at or after at.
	// Zero: nothing is held.
	at time.Time
	entry
	// puts counts the commits held: a read begun before one keeps
	// nothing, so that the instance reads its own writes.
	puts uint64
}

// entry is a head, or the ENOTFOUND of a read that found none, with the
// compressed document the head names when it is known (nil otherwise).
// A head a commit wrote comes with its document: nothing asks the store
// for its chunks.
type entry struct {
	head    config.Head
	gzip    []byte
	missing error
}

// Head returns the head of the stored document, as of at most
// config.Staleness ago: ENOTFOUND when there is none.
func (c *Config) Head(ctx context.Context) (config.Head, error) {
	now := c.now()
	e, puts, ok := c.lookup(now)
	if ok {
		return e.head, e.missing
	}
	head, err := c.Store.Head(ctx)
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return config.Head{}, err
	}
	e = c.keep(entry{head: head, missing: err}, now, puts)
	return e.head, e.missing
}

// Current returns the head of the stored document as the store reads it
// now, for a write to decide on.
func (c *Config) Current(ctx context.Context) (config.Head, error) { return c.Store.Current(ctx) }

// Gzip returns the compressed document h names: the one held, when it is
// h's, or else the store's, which it then holds. When the store finds h's
// document replaced (config.ErrReplaced), the head held is dropped: the
// next Head reads the store's.
func (c *Config) Gzip(ctx context.Context, h config.Head) ([]byte, error) {
	if z := c.held(h); z != nil {
		return z, nil
	}
	z, err := c.Store.Gzip(ctx, h)
	if errors.Is(err, config.ErrReplaced) {
		c.drop(h)
	}
	if err != nil {
		return nil, err
	}
	c.fill(h, z)
	return z, nil
}

// Commit commits rep through the store and, once it committed, holds the
// document it stored.
func (c *Config) Commit(ctx context.Context, rep config.Replacement) error {
	start := c.now()
	if err := c.Store.Commit(ctx, rep); err != nil {
		return err
	}
	// A copy, without the spare capacity of the buffer it was compressed
	// into.
	c.put(entry{head: rep.Document.Head, gzip: bytes.Clone(rep.Document.Gzip)}, start)
	return nil
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// lookup returns what is held and the commits held so far, and reports
// whether it is less than config.Staleness old at now.
func (c *Config) lookup(now time.Time) (e entry, puts uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entry, c.puts, !c.at.IsZero() && now.Sub(c.at) < config.Staleness
}

// keep holds e, what a read that began at found, unless a later read's
// finding is held, or a commit held since puts, and returns e with the
// compressed document held for its head, if any.
func (c *Config) keep(e entry, at time.Time, puts uint64) entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e = c.same(e)
	if puts == c.puts && !at.Before(c.at) {
		c.at, c.entry = at, e
	}
	return e
}

// put holds e, what a commit that began at stored.
func (c *Config) put(e entry, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.entry = at, c.same(e)
	c.puts++
}

// same returns e with the compressed document held when it is e's: those
// bytes, read from the store, serve.
func (c *Config) same(e entry) entry {
	if !c.at.IsZero() && e.missing == nil && c.missing == nil && c.head.Hash == e.head.Hash && c.gzip != nil {
		e.gzip = c.gzip
	}
	return e
}

// held returns the compressed document of h when it is the one held.
func (c *Config) held(h config.Head) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.missing == nil && c.head.Hash == h.Hash {
		return c.gzip
	}
	return nil
}

// fill holds gzip, the compressed document read from the store for head,
// if head is still the head held and its document is not held yet.
func (c *Config) fill(head config.Head, gzip []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && c.missing == nil && c.head.Hash == head.Hash && c.gzip == nil {
		c.gzip = gzip
	}
}

// drop forgets the head held when it is h: the store replaced its
// document.
func (c *Config) drop(h config.Head) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.head == h {
		c.at, c.entry = time.Time{}, entry{}
	}
}
