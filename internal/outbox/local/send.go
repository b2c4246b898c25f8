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

// Delivery bounds: a Sender tries an event this many times, waiting
// firstWait, then twice as long each time up to maxWait, and each attempt
// at most attemptTimeout.
const (
	maxAttempts    = 8
	firstWait      = 250 * time.Millisecond
	maxWait        = 8 * time.Second
	attemptTimeout = 5 * time.Second
	queued         = 1024
)

// A Sender posts events to a URL, a webhook's receiver: each as its JSON
// (the event's schema in the OpenAPI documents' webhooks), in the order
// given, tried again with back-off until the receiver answers 2xx, and
// given up with a WARN line after maxAttempts. The receiver deduplicates
// by the event's id: an event may come twice. Send never waits for the
// receiver.
type Sender struct {
	url    string
	client *http.Client
	queue  chan quire.Event
	wait   func(ctx context.Context, d time.Duration) error
}

// NewSender returns a Sender to url, which posts until ctx is done.
func NewSender(ctx context.Context, url string) *Sender {
	s := &Sender{url: url, client: &http.Client{Timeout: attemptTimeout}, queue: make(chan quire.Event, queued), wait: sleep}
	go s.run(ctx)
	return s
}

// Send queues ev for its receiver. When a receiver that does not answer
// has let queued events pile up, it waits for room: what it holds back is
// the stream's reading, which keeps the events, never a request of the
// API's.
func (s *Sender) Send(ctx context.Context, ev quire.Event) {
	select {
	case s.queue <- ev:
	case <-ctx.Done():
	}
}

func (s *Sender) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-s.queue:
			s.deliver(ctx, ev)
		}
	}
}

// deliver posts ev until its receiver takes it, or gives up.
func (s *Sender) deliver(ctx context.Context, ev quire.Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		slog.ErrorContext(ctx, "an event that is not JSON", "event_id", ev.ID, "err", err)
		return
	}
	wait := firstWait
	for attempt := 1; ; attempt++ {
		err := s.post(ctx, body)
		if err == nil {
			return
		}
		if attempt == maxAttempts || ctx.Err() != nil {
			slog.WarnContext(ctx, "an event was not delivered to EVENTS_URL", "event_id", ev.ID, "type", ev.Type,
				"attempts", attempt, "err", err)
			return
		}
		if s.wait(ctx, wait) != nil {
			return
		}
		wait = min(2*wait, maxWait)
	}
}

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
