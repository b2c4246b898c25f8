package local

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// A Sender posts each event in order and tries again while the receiver
// is down, here for 10 minutes: with waits that double up to maxWait, and
// a WARN line when it first fails, then one a minute, each naming the
// event, how long the receiver has been down and the attempts. The
// receiver gets every event within maxWait of coming back.
func TestSenderWhileTheReceiverIsDown(t *testing.T) {
	start := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	up := start.Add(10 * time.Minute)
	s, r := newTestSender(t, clk, func(quire.Event) int {
		if clk.now().Before(up) {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	ids := []string{"first", "second", "third"}
	for _, id := range ids {
		s.Send(t.Context(), event(id, start))
	}
	r.run(t, s, len(ids))

	if !slices.Equal(r.delivered, ids) {
		t.Fatalf("delivered %v, want %v", r.delivered, ids)
	}
	if back := clk.now().Sub(up); back < 0 || back >= maxWait {
		t.Errorf("the receiver got the first event %v after it came back, want within %v", back, maxWait)
	}
	wantPosts := slices.Repeat([]string{"first"}, len(clk.waits)+1) // each failed attempt waits
	if wantPosts = append(wantPosts, "second", "third"); !slices.Equal(r.posts(), wantPosts) {
		t.Errorf("posted %v, want %v", r.posts(), wantPosts)
	}
	wait := firstWait
	for i, got := range clk.waits {
		if got != wait {
			t.Fatalf("wait %d was %v, want %v (all: %v)", i+1, got, wait, clk.waits)
		}
		wait = min(2*wait, maxWait)
	}

	warnings := r.logged(t, "EVENTS_URL does not take events; trying again")
	if len(warnings) < 10 || len(warnings) >= len(clk.waits) {
		t.Fatalf("%d WARN lines for %d attempts in 10 minutes down, want one a minute: %v", len(warnings), len(clk.waits)+1, warnings)
	}
	var last time.Duration
	for i, w := range warnings {
		down, err := time.ParseDuration(w["down"].(string))
		if err != nil || w["event_id"] != "first" || w["level"] != "WARN" || w["attempts"] == nil {
			t.Fatalf("a WARN line %v, want the pending event's id, how long the receiver has been down and the attempts", w)
		}
		if gap := down - last; i == 0 && down != 0 || i > 0 && (gap < warnEvery || gap >= warnEvery+maxWait) {
			t.Errorf("WARN lines at %v then %v down, want the first at once, then one a minute", last, down)
		}
		last = down
	}
	if back := r.logged(t, "EVENTS_URL takes events again"); len(back) != 1 || back[0]["event_id"] != "first" {
		t.Errorf("the lines that the receiver came back: %v, want one naming the event", back)
	}
}

// A Sender gives up an event once it is older than the outbox keeps it,
// with a WARN line naming it, and goes on to the next: the receiver is
// never sent an event older than that.
func TestSenderGivesUpAfterSevenDays(t *testing.T) {
	start := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	s, r := newTestSender(t, clk, func(ev quire.Event) int {
		if ev.ID == "old" {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	old := event("old", start.Add(-keep+3*time.Minute))
	for _, ev := range []quire.Event{event("older", start.Add(-keep-time.Hour)), old, event("next", start)} {
		s.Send(t.Context(), ev)
	}
	r.run(t, s, 3)

	if want := []string{"older", "old", "next"}; !slices.Equal(r.delivered, want) {
		t.Fatalf("done with %v, want %v", r.delivered, want)
	}
	if posts := r.posts(); slices.Contains(posts, "older") || !slices.Contains(posts, "old") || posts[len(posts)-1] != "next" {
		t.Errorf("posted %v, want old until given up, then next, and never older", posts)
	}
	if clk.now().Before(old.Time.Add(keep)) || clk.now().After(old.Time.Add(keep+maxWait)) {
		t.Errorf("old given up at %v, want when it was 7 days old, %v", clk.now(), old.Time.Add(keep))
	}
	var given []string
	for _, w := range r.logged(t, "an event older than the outbox keeps one was given up") {
		given = append(given, w["event_id"].(string))
	}
	if want := []string{"older", "old"}; !slices.Equal(given, want) {
		t.Errorf("WARN lines of events given up name %v, want %v", given, want)
	}
}

// A Sender stopped while it tries an event again says so, naming it and how
// many wait behind it, and does not count it delivered: with DATA_DIR, the
// next make run sends it.
func TestSenderStopped(t *testing.T) {
	clk := &clock{t: time.Now()}
	s, r := newTestSender(t, clk, func(quire.Event) int { return http.StatusServiceUnavailable })
	ctx, cancel := context.WithCancel(t.Context())
	s.wait = func(ctx context.Context, d time.Duration) error {
		cancel() // make run stops while the Sender waits
		return ctx.Err()
	}
	s.Send(ctx, event("pending", clk.now()))
	s.Send(ctx, event("behind", clk.now()))
	s.Run(ctx)

	if len(r.delivered) != 0 {
		t.Errorf("delivered %v, want none", r.delivered)
	}
	stopped := r.logged(t, "stopped before EVENTS_URL took the event: with DATA_DIR, make run sends it, and those behind it, when it starts again")
	if len(stopped) != 1 || stopped[0]["event_id"] != "pending" || stopped[0]["queued_behind"] != 1.0 {
		t.Errorf("the lines on stopping: %v, want one naming the pending event and 1 behind it", stopped)
	}
}

// clock is a Sender's time in a test: a wait moves it on at once.
type clock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) wait(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	return ctx.Err()
}

// received is what a test's receiver and Sender did.
type received struct {
	mu        sync.Mutex
	posted    []string // the ids of the events posted, each attempt
	delivered []string // the ids of the events the Sender was done with
	log       bytes.Buffer
}

// newTestSender returns a Sender on clk to a receiver that answers each
// event posted with the status answer returns, logging in JSON.
func newTestSender(t *testing.T, clk *clock, answer func(quire.Event) int) (*Sender, *received) {
	t.Helper()
	r := &received{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev quire.Event
		if err := json.NewDecoder(req.Body).Decode(&ev); err != nil || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("the receiver got %v, %s", err, req.Header.Get("Content-Type"))
		}
		r.mu.Lock()
		r.posted = append(r.posted, ev.ID)
		r.mu.Unlock()
		w.WriteHeader(answer(ev))
	}))
	t.Cleanup(receiver.Close)
	s := NewSender(receiver.URL, func(ev quire.Event) {
		r.delivered = append(r.delivered, ev.ID)
	})
	s.client, s.log, s.now, s.wait = receiver.Client(), slog.New(slog.NewJSONHandler(&r.log, nil)), clk.now, clk.wait
	return s, r
}

// run runs s until it is done with n events.
func (r *received) run(t *testing.T, s *Sender, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := s.done
	s.done = func(ev quire.Event) {
		if done(ev); len(r.delivered) == n {
			cancel()
		}
	}
	s.Run(ctx)
}

func (r *received) posts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.posted)
}

// logged returns the lines the Sender logged with msg, once it has stopped.
func (r *received) logged(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(r.log.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line that is not JSON: %s", line)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// event returns an event with id, at t.
func event(id string, t time.Time) quire.Event {
	return quire.Event{ID: id, Type: quire.EventUserFunded, Subject: "/users/7", Time: t, Data: json.RawMessage(`{}`)}
}
