package local

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/shared/quire"
)

// A Sender posts each event in order, tries again when the receiver fails,
// with waits that double, and gives up after maxAttempts.
func TestSender(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	failing := map[string]int{"second": 2, "never": maxAttempts + 5}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev quire.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("the receiver got %v, %s", err, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.ID)
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 1+3+maxAttempts+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"first", "second", "second", "second"}
	for range maxAttempts {
		want = append(want, "never")
	}
	want = append(want, "last")
	if len(got) != len(want) {
		t.Fatalf("posted %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("posted %v, want %v", got, want)
		}
	}
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
