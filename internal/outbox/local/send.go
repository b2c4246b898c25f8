package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// Delivery bounds: a Sender waits firstWait after an attempt that failed,
// then twice as long each time up to maxWait, and tries each attempt at
// most attemptTimeout. It says that the receiver is down at the first
// failure, then every warnEvery.
const (
	firstWait = 250 * time.Millisecond
	// maxWait is half a minute: a receiver that comes back (restarted, or
	// fixed) gets its events within it, and one down for days costs two
	// requests a minute.
	maxWait        = 30 * time.Second
	warnEvery      = time.Minute
	attemptTimeout = 5 * time.Second
	queued         = 1024
	// keep is how long the outbox keeps an event (package dynamo's
	// eventTTL, its items' expires_at): after it, an event is given up.
	keep = 7 * 24 * time.Hour
)

// A Sender posts events to a URL, a webhook's receiver: each as its JSON
// (the event's schema in the OpenAPI documents' webhooks), in the order
// given, tried again with back-off until the receiver answers 2xx, and
// given up with a WARN line once it is older than the outbox keeps it (7
// days). The receiver deduplicates by the event's id: an event may come
// twice. Send never waits for the receiver.
type Sender struct {
	url    string
	client *http.Client
	queue  chan quire.Event
	done   func(quire.Event)
	log    *slog.Logger
	now    func() time.Time
	wait   func(ctx context.Context, d time.Duration) error
}

// NewSender returns a Sender to url, whose Run posts the events Send
// queues, and calls done with each one its receiver took, or that it gave
// up, in their order.
func NewSender(url string, done func(quire.Event)) *Sender {
	return &Sender{url: url, client: &http.Client{Timeout: attemptTimeout}, queue: make(chan quire.Event, queued),
		done: done, log: slog.Default(), now: time.Now, wait: sleep}
}

// Send queues ev for its receiver. When a receiver that does not answer
// has let queued events pile up, it waits for room: what it holds back is
// the Follower's reading (which catches up from the outbox table should the
// stream lose its place), never a request of the API's.
func (s *Sender) Send(ctx context.Context, ev quire.Event) {
	select {
	case s.queue <- ev:
	case <-ctx.Done():
	}
}

// Run posts the events queued until ctx is done.
func (s *Sender) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-s.queue:
			if ctx.Err() != nil {
				return // stopped meanwhile
			}
			s.deliver(ctx, ev)
		}
	}
}

// deliver posts ev until its receiver takes it, ev is too old, or ctx is
// done.
func (s *Sender) deliver(ctx context.Context, ev quire.Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		s.log.ErrorContext(ctx, "an event that is not JSON was given up", "event_id", ev.ID, "err", err)
		s.done(ev)
		return
	}
	var down, warned time.Time // when the first attempt failed, and when it was said
	wait := firstWait
	for attempt := 1; ; attempt++ {
		now := s.now()
		if now.Sub(ev.Time) >= keep {
			s.log.WarnContext(ctx, "an event older than the outbox keeps one was given up", "event_id", ev.ID,
				"type", ev.Type, "time", ev.Time, "attempts", attempt-1)
			s.done(ev)
			return
		}
		err := s.post(ctx, body)
		if err == nil {
			if attempt > 1 {
				s.log.InfoContext(ctx, "EVENTS_URL takes events again", "event_id", ev.ID, "down", since(down, now), "attempts", attempt)
			}
			s.done(ev)
			return
		}
		if ctx.Err() != nil {
			s.stopped(ctx, ev, attempt)
			return
		}
		if attempt == 1 {
			down = now
		}
		if attempt == 1 || now.Sub(warned) >= warnEvery {
			warned = now
			s.log.WarnContext(ctx, "EVENTS_URL does not take events; trying again", "event_id", ev.ID, "type", ev.Type,
				"down", since(down, now), "attempts", attempt, "err", err)
		}
		if s.wait(ctx, wait) != nil {
			s.stopped(ctx, ev, attempt)
			return
		}
		wait = min(2*wait, maxWait)
	}
}

// stopped says that ctx was done before ev was delivered.
func (s *Sender) stopped(ctx context.Context, ev quire.Event, attempts int) {
	s.log.WarnContext(ctx, "stopped before EVENTS_URL took the event: with DATA_DIR, make run sends it, and those behind it, when it starts again",
		"event_id", ev.ID, "attempts", attempts, "queued_behind", len(s.queue))
}

// since is how long from t to now, to the second, as text in every log
// format.
func since(t, now time.Time) string { return now.Sub(t).Round(time.Second).String() }

// post posts body once: nil when the receiver answered 2xx.
func (s *Sender) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Quire-Events/1")
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("the receiver answered %s", res.Status)
	}
	return nil
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
