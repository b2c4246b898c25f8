package cache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// recent keeps what reads found for ttl after each read began, within
// about maxBytes (least recently used out first), and makes concurrent
// misses of one key one read: callers that miss a key another caller is
// reading wait for that read and share its result. A value is nil for a
// key that has no item: absences are kept too. Errors are never kept.
//
// forget drops keys at once (read-your-writes for a write through the
// same instance), and a read that began before a forget keeps nothing.
// recent is safe for concurrent use.
type recent struct {
	ttl      time.Duration
	maxBytes int
	now      func() time.Time

	mu      sync.Mutex
	gen     uint64                   // forgets so far: a read begun in another generation keeps nothing
	bytes   int                      // the size of every entry
	order   list.List                // of *kept, the most recently used first
	entries map[string]*list.Element // by key
	flights map[string]*flight       // reads under way, by key
	joined  int                      // calls that waited for another's read: for tests
}

// entryBytes is about what an entry costs beyond its key and value: the
// list element, the map slot and the entry itself.
const entryBytes = 160

type kept struct {
	key     string
	val     any
	size    int
	expires time.Time
}

// flight is a read of a key under way; done closes when it ends.
type flight struct {
	done    chan struct{}
	val     any
	expires time.Time
	err     error
}

// loaded is a value a read found, with its size in bytes (about), and, for
// a value made from values other reads found (a page of cached products),
// the time the oldest of those expires; zero for the read's start plus ttl.
type loaded struct {
	val     any
	size    int
	expires time.Time
}

// loader reads keys from DynamoDB and returns what it found; a key with no
// item has no entry in the map.
type loader func(ctx context.Context, keys []string) (map[string]loaded, error)

// errLoadPanicked is what the callers that waited for a read see when the
// read panicked (the reader's own call panics on).
var errLoadPanicked = errors.New("a read of the cache's keys panicked")

func newRecent(ttl time.Duration, maxBytes int, now func() time.Time) *recent {
	return &recent{ttl: ttl, maxBytes: maxBytes, now: now, entries: map[string]*list.Element{}, flights: map[string]*flight{}}
}

// get returns the values of those keys that have one, from the cache where
// it holds them, fresh, and else with load, called at most once with the
// keys that nobody is reading; and the time the oldest value (absences
// included) expires. It returns load's error, its own or that of the read
// it waited for, or ctx's when ctx ends while it waits.
func (c *recent) get(ctx context.Context, keys []string, load loader) (map[string]any, time.Time, error) {
	out := make(map[string]any, len(keys))
	var oldest time.Time
	found := func(key string, val any, expires time.Time) {
		if val != nil {
			out[key] = val
		}
		if oldest.IsZero() || expires.Before(oldest) {
			oldest = expires
		}
	}
	for pending := dedup(keys); len(pending) > 0; {
		gen, start, mine, theirs := c.claim(pending, found)
		if len(mine) > 0 {
			if err := c.fill(ctx, gen, start, mine, load); err != nil {
				return nil, time.Time{}, err
			}
			for key, f := range mine {
				found(key, f.val, f.expires)
			}
		}
		pending = nil
		for key, f := range theirs {
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, time.Time{}, fmt.Errorf("wait for a read of %s: %w", key, ctx.Err())
			}
			switch {
			case f.err == nil:
				found(key, f.val, f.expires)
			case ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)):
				// The reader's request ended, not this one's: read again.
				pending = append(pending, key)
			default:
				return nil, time.Time{}, f.err
			}
		}
	}
	return out, oldest, nil
}

// claim passes to found each key of keys the cache holds fresh, and sorts
// the others into reads it starts (mine) and reads under way (theirs). It
// returns the generation and time its reads begin in.
func (c *recent) claim(keys []string, found func(string, any, time.Time)) (gen uint64, start time.Time, mine, theirs map[string]*flight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start = c.now()
	for _, key := range keys {
		if el, ok := c.entries[key]; ok {
			e := el.Value.(*kept)
			if start.Before(e.expires) {
				c.order.MoveToFront(el)
				found(key, e.val, e.expires)
				continue
			}
			c.remove(el)
		}
		if f, ok := c.flights[key]; ok {
			if theirs == nil {
				theirs = map[string]*flight{}
			}
			theirs[key] = f
			c.joined++
			continue
		}
		if mine == nil {
			mine = map[string]*flight{}
		}
		f := &flight{done: make(chan struct{})}
		mine[key], c.flights[key] = f, f
	}
	return c.gen, start, mine, theirs
}

// fill runs load for the keys of mine, ends their flights with what it
// found, and keeps that unless a forget came since gen.
func (c *recent) fill(ctx context.Context, gen uint64, start time.Time, mine map[string]*flight, load loader) (err error) {
	keys := make([]string, 0, len(mine))
	for key := range mine {
		keys = append(keys, key)
	}
	var vals map[string]loaded
	defer func() {
		p := recover()
		if p != nil {
			err = errLoadPanicked
		}
		c.mu.Lock()
		for key, f := range mine {
			f.err = err
			if err == nil {
				v := vals[key]
				f.val, f.expires = v.val, start.Add(c.ttl)
				if !v.expires.IsZero() && v.expires.Before(f.expires) {
					f.expires = v.expires
				}
				if c.gen == gen {
					c.store(key, v.val, v.size, f.expires)
				}
			}
			if c.flights[key] == f {
				delete(c.flights, key)
			}
		}
		c.mu.Unlock()
		for _, f := range mine {
			close(f.done)
		}
		if p != nil {
			panic(p)
		}
	}()
	vals, err = load(ctx, keys)
	return err
}

// store keeps val under key until expires, dropping the least recently
// used entries past maxBytes. A value larger than maxBytes is not kept.
// c.mu is held.
func (c *recent) store(key string, val any, size int, expires time.Time) {
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	size += len(key) + entryBytes
	if size > c.maxBytes || !expires.After(c.now()) {
		return
	}
	c.entries[key] = c.order.PushFront(&kept{key: key, val: val, size: size, expires: expires})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

// remove drops an entry. c.mu is held.
func (c *recent) remove(el *list.Element) {
	e := c.order.Remove(el).(*kept)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// forget drops keys and every key that starts with prefix (unless prefix
// is ""), and stops reads under way from keeping anything: the next get
// of any of them reads again.
func (c *recent) forget(prefix string, keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	gone := func(key string) bool { return prefix != "" && strings.HasPrefix(key, prefix) }
	for _, key := range keys {
		if el, ok := c.entries[key]; ok {
			c.remove(el)
		}
		delete(c.flights, key)
	}
	for key, el := range c.entries {
		if gone(key) {
			c.remove(el)
		}
	}
	for key := range c.flights {
		if gone(key) {
			delete(c.flights, key)
		}
	}
}

// size returns the bytes and entries the cache holds.
func (c *recent) size() (bytes, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, len(c.entries)
}

func dedup(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
