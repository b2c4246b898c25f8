package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/testing/quiretest"
)

func newClock() *quiretest.Clock {
	return quiretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// counting is a loader that finds "v:<key>" (of size 10) for every key but
// those starting with "absent", and counts the keys it was asked for.
type counting struct {
	calls atomic.Int32
	keys  atomic.Int32
}

func (l *counting) load(_ context.Context, keys []string) (map[string]loaded, error) {
	l.calls.Add(1)
	l.keys.Add(int32(len(keys)))
	out := map[string]loaded{}
	for _, k := range keys {
		if len(k) < 6 || k[:6] != "absent" {
			out[k] = loaded{val: "v:" + k, size: 10}
		}
	}
	return out, nil
}

func mustGet(t *testing.T, c *recent, load loader, keys ...string) map[string]any {
	t.Helper()
	got, _, err := c.get(t.Context(), keys, load)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRecentKeepsForTTL: a value and an absence are served from the cache
// until ttl after their read began, then read again.
func TestRecentKeepsForTTL(t *testing.T) {
	clk, l := newClock(), &counting{}
	c := newRecent(time.Second, 1<<20, clk.Now)
	want := map[string]any{"a": "v:a"}
	for _, step := range []struct {
		advance time.Duration
		calls   int32
	}{{0, 1}, {0, 1}, {999 * time.Millisecond, 1}, {time.Millisecond, 2}, {500 * time.Millisecond, 2}} {
		clk.Add(step.advance)
		if diff := cmp.Diff(want, mustGet(t, c, l.load, "a", "absent-b")); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if n := l.calls.Load(); n != step.calls {
			t.Errorf("after %v more: %d reads, want %d", step.advance, n, step.calls)
		}
	}
	// Only the keys it lacks are read.
	mustGet(t, c, l.load, "a", "c")
	if n, k := l.calls.Load(), l.keys.Load(); n != 3 || k != 5 {
		t.Errorf("%d reads of %d keys, want 3 of 5", n, k)
	}
}

// TestRecentOneReadForConcurrentMisses: callers that miss a key while
// another reads it wait for that read: one read for all of them.
func TestRecentOneReadForConcurrentMisses(t *testing.T) {
	const callers = 20
	c := newRecent(time.Second, 1<<20, newClock().Now)
	release := make(chan struct{})
	var reads atomic.Int32
	load := func(_ context.Context, keys []string) (map[string]loaded, error) {
		reads.Add(1)
		<-release
		return map[string]loaded{"k": {val: "v", size: 1}}, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			got, _, err := c.get(context.Background(), []string{"k"}, load)
			if err == nil && got["k"] != "v" {
				err = fmt.Errorf("got %v", got)
			}
			errs <- err
		})
	}
	// Release the read once every other caller waits for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		joined := c.joined
		c.mu.Unlock()
		if joined == callers-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers joined the read, want %d", joined, callers-1)
		}
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads, want 1", n)
	}
}

// TestRecentErrors: an error is shared by the callers that waited for the
// read but never kept; a read whose own caller's request ended is made
// again by a caller whose request goes on.
func TestRecentErrors(t *testing.T) {
	c := newRecent(time.Second, 1<<20, newClock().Now)
	boom := errors.New("boom")
	fail := func(context.Context, []string) (map[string]loaded, error) { return nil, boom }
	if _, _, err := c.get(t.Context(), []string{"k"}, fail); !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	l := &counting{}
	mustGet(t, c, l.load, "k")
	if l.calls.Load() != 1 {
		t.Errorf("the error was kept: %d reads after it", l.calls.Load())
	}

	// A reader whose context ends: the caller waiting for it reads itself.
	c = newRecent(time.Second, 1<<20, newClock().Now)
	started, done := make(chan struct{}), make(chan error)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_, _, err := c.get(ctx, []string{"k"}, func(ctx context.Context, _ []string) (map[string]loaded, error) {
			close(started)
			<-ctx.Done()
			return nil, fmt.Errorf("read k: %w", ctx.Err())
		})
		done <- err
	}()
	<-started
	waiter := make(chan map[string]any)
	go func() {
		got, _, err := c.get(t.Context(), []string{"k"}, l.load)
		if err != nil {
			t.Error(err)
		}
		waiter <- got
	}()
	for {
		c.mu.Lock()
		joined := c.joined
		c.mu.Unlock()
		if joined == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the reader's error %v, want context.Canceled", err)
	}
	if got := <-waiter; got["k"] != "v:k" {
		t.Errorf("the waiter got %v, want its own read", got)
	}
}

// TestRecentForget: forget drops keys and a prefix's at once, and a read
// that began before it keeps nothing (so that a write through the same
// instance is read at once, even with a read of the old value under way).
func TestRecentForget(t *testing.T) {
	c, l := newRecent(time.Hour, 1<<20, newClock().Now), &counting{}
	mustGet(t, c, l.load, "a", "b", "list/1", "list/2")
	c.forget("list/", "a")
	mustGet(t, c, l.load, "a", "b", "list/1", "list/2")
	if k := l.keys.Load(); k != 4+3 {
		t.Errorf("%d keys read, want 7: b kept, the rest read again", k)
	}

	// A read under way while its key is forgotten returns its (old) value
	// to its caller, but the next get reads again.
	inRead, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		_, _, _ = c.get(context.Background(), []string{"x"}, func(context.Context, []string) (map[string]loaded, error) { // the next get shows what it kept
			close(inRead)
			<-release
			return map[string]loaded{"x": {val: "old", size: 1}}, nil
		})
	}()
	<-inRead
	c.forget("", "x")
	if got := mustGet(t, c, l.load, "x"); got["x"] != "v:x" {
		t.Errorf("after forget, with the old read under way: %v, want a new read", got)
	}
	close(release)
	<-finished
	if got := mustGet(t, c, l.load, "x"); got["x"] != "v:x" {
		t.Errorf("the old read's value was kept: %v", got)
	}
}

// TestRecentBound: the cache holds at most maxBytes, dropping the least
// recently used first; a value larger than the bound is not kept.
func TestRecentBound(t *testing.T) {
	const per = 10 + entryBytes + 2 // value, entry, key of 2 bytes
	c, l := newRecent(time.Hour, 5*per, newClock().Now), &counting{}
	for i := range 50 {
		mustGet(t, c, l.load, fmt.Sprintf("%02d", i))
		mustGet(t, c, l.load, "00") // kept in use
		if bytes, n := c.size(); bytes > 5*per || n > 5 {
			t.Fatalf("after %d keys: %d bytes in %d entries, bound %d", i+1, bytes, n, 5*per)
		}
	}
	before := l.calls.Load()
	mustGet(t, c, l.load, "00", "49", "48", "47", "46")
	if n := l.calls.Load() - before; n != 0 {
		t.Errorf("the most recently used keys made %d reads", n)
	}
	mustGet(t, c, l.load, "01")
	if n := l.calls.Load() - before; n != 1 {
		t.Errorf("the least recently used key was kept")
	}

	big := func(context.Context, []string) (map[string]loaded, error) {
		return map[string]loaded{"big": {val: "big", size: 10 * per}}, nil
	}
	mustGet(t, c, big, "big")
	if _, ok := c.entries["big"]; ok {
		t.Errorf("a value over the bound was kept")
	}
	if _, n := c.size(); n != 5 {
		t.Errorf("a value over the bound dropped others: %d entries left", n)
	}
}
