package cache

import (
	"testing"
	"time"

	"github.com/quireapi/quire/internal/config"
)

// The order of events of the configuration's cache, which concurrent requests in one instance
// (the local gateway's) can reach: what the instance stores, it serves at
// once, whatever reads of the head were under way; and it holds one
// document.
func TestCacheOrder(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	old := entry{head: config.Head{Hash: "old", Size: 3, Generation: "g1", Chunks: 1}}
	stored := entry{head: config.Head{Hash: "new", Size: 3}, gzip: []byte("new")}

	var c Config
	if _, _, ok := c.lookup(t0); ok {
		t.Fatal("an empty cache serves")
	}
	// A read begins, the instance's PUT stores a document, and the read,
	// which found the old head, ends: the PUT's document stays.
	_, puts, _ := c.lookup(t0)
	c.put(stored, t0.Add(time.Millisecond))
	if got := c.keep(old, t0, puts); got.head.Hash != "old" || got.gzip != nil {
		t.Errorf("the read answers %+v, want what it found", got)
	}
	e, puts, ok := c.lookup(t0.Add(time.Millisecond))
	if !ok || e.head.Hash != "new" || string(e.gzip) != "new" {
		t.Fatalf("after a read begun before the PUT, the cache holds %+v (fresh %t), want the PUT's document", e, ok)
	}
	// A read of the same head, with its generation, keeps the bytes held.
	read := entry{head: config.Head{Hash: "new", Size: 3, Generation: "g2", Chunks: 1}}
	if got := c.keep(read, t0.Add(config.Staleness), puts); string(got.gzip) != "new" || got.head.Generation != "g2" {
		t.Errorf("a read of the held document answers %+v, want its head with the bytes held", got)
	}
	// Fresh until config.Staleness after the read began.
	if _, _, ok := c.lookup(t0.Add(2*config.Staleness - time.Nanosecond)); !ok {
		t.Error("stale before config.Staleness has passed")
	}
	if _, _, ok := c.lookup(t0.Add(2 * config.Staleness)); ok {
		t.Error("fresh once config.Staleness has passed")
	}
	// A head with another hash drops the document held.
	_, puts, _ = c.lookup(t0.Add(2 * config.Staleness))
	c.keep(old, t0.Add(2*config.Staleness), puts)
	if e, _, _ := c.lookup(t0.Add(2 * config.Staleness)); e.head.Hash != "old" || e.gzip != nil {
		t.Errorf("after a read of another head, the cache holds %+v, want that head and no document", e)
	}
	// A read that began before the one cached keeps nothing.
	if c.keep(stored, t0, puts); c.head.Hash != "old" {
		t.Errorf("an earlier read replaced a later one: %+v", c.entry)
	}
}
