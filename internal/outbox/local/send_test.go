package local

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// A Sender posts each event in order, tries again when the receiver fails,
// with waits that double, and gives up after maxAttempts.
func TestSender(t *testing.T) {
	var mu sync.Mutex
	posts := make(chan string, 64)
	failing := map[string]int{"second": 2, "never": maxAttempts + 5}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev quire.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("the receiver got %v, %s", err, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		defer mu.Unlock()
		posts <- ev.ID
		if failing[ev.ID] > 0 {
			failing[ev.ID]--
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer receiver.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var waits []time.Duration
	s := &Sender{url: receiver.URL, client: receiver.Client(), queue: make(chan quire.Event, 4),
		wait: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, d)
			return nil
		}}
	go s.run(ctx)
	for _, id := range []string{"first", "second", "never", "last"} {
		s.Send(ctx, quire.Event{ID: id, Type: "t", Data: json.RawMessage(`{}`)})
	}
	want := []string{"first", "second", "second", "second"}
	for range maxAttempts {
		want = append(want, "never")
	}
	want = append(want, "last")
	var got []string
	timeout := time.After(5 * time.Second)
	for len(got) < len(want) {
		select {
		case id := <-posts:
			got = append(got, id)
		case <-timeout:
			t.Fatalf("posted %v after 5 s, want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("posted %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	wantWaits := []time.Duration{firstWait, 2 * firstWait, firstWait, 2 * firstWait, 4 * firstWait, 8 * firstWait, 16 * firstWait, maxWait, maxWait}
	if len(waits) != len(wantWaits) {
		t.Fatalf("waited %v, want %v", waits, wantWaits)
	}
	for i := range wantWaits {
		if waits[i] != wantWaits[i] {
			t.Fatalf("waited %v, want %v", waits, wantWaits)
		}
	}
}
