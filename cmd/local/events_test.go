package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/outbox/local"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestEvents: make run delivers the events of what commits from DynamoDB
// Local's stream, as log lines and as JSON posts to EVENTS_URL, tried
// again when the receiver fails: a customer's payment is received as
// order.placed within seconds, as the documents' webhook describes it; its
// replay under the same idempotency key, and a refused payment, send
// nothing: the next event received is the admin's deposit that follows
// them (the stream of DynamoDB Local's outbox keeps the order of commits).
func TestEvents(t *testing.T) {
	received := make(chan quire.Event, 16)
	var posts atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable) // the first post is tried again
			return
		}
		body, _ := io.ReadAll(r.Body)
		var ev quire.Event
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &ev) != nil {
			t.Errorf("the receiver got %s %s with %s: %s", r.Method, r.URL, r.Header.Get("Content-Type"), body)
		}
		if err := servicetest.CheckEvent(body); err != nil {
			t.Error(err)
		}
		// The check fails an event that lost a member of its data.
		if ev.Type == quire.EventOrderPlaced && servicetest.CheckEvent([]byte(strings.Replace(string(body), `"total":`, `"sum":`, 1))) == nil {
			t.Errorf("an order.placed without its total passes the document's check")
		}
		// And one whose data, or one of its items, gained a member the
		// document does not name: what the code adds, the document says.
		for _, drift := range []string{`"total":`, `"quantity":`} {
			if ev.Type == quire.EventOrderPlaced && servicetest.CheckEvent([]byte(strings.Replace(string(body), drift, `"note":"x",`+drift, 1))) == nil {
				t.Errorf("an order.placed with a member the document does not name (beside %s) passes the document's check", drift)
			}
		}
		received <- ev
	}))
	defer receiver.Close()
	var order string
	lines := serve(t, "json", func(url string) {
		token := login(t, url, demo.CustomerEmail, demo.CustomerPassword) // her cart has books in it
		paid := call(t, url, token, "POST /pay", "event-test-1", "", http.StatusCreated)
		order = paid["id"].(json.Number).String()
		call(t, url, token, "POST /pay", "event-test-1", "", http.StatusCreated)  // the replay
		call(t, url, token, "POST /pay", "event-test-2", "", http.StatusConflict) // the cart is empty now
		admin := login(t, url, demo.AdminEmail, demo.AdminPassword)
		call(t, url, admin, "POST /users/2/deposit", "", `{"amount": 1.00}`, http.StatusOK)
		select {
		case ev := <-received:
			var data struct {
				OrderID quire.ID    `json:"order_id"`
				UserID  quire.ID    `json:"user_id"`
				Total   json.Number `json:"total"`
				Items   []any       `json:"items"`
			}
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatal(err)
			}
			if ev.Type != quire.EventOrderPlaced || ev.Subject != "/orders/"+order || data.OrderID.String() != order ||
				data.UserID != 2 || len(data.Items) == 0 || data.Total != paid["total"] || len(ev.ID) != quire.HashLen {
				t.Errorf("received %+v, data %+v; want order %s placed by user 2 for %s", ev, data, order, paid["total"])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event within 10 s (%d posts)", posts.Load())
		}
		select {
		case ev := <-received:
			if ev.Type != quire.EventUserFunded {
				t.Errorf("received %+v after the order: a replay or a refused payment published", ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no deposit's event within 10 s")
		}
	}, append(onTables(t), "EVENTS_URL", receiver.URL)...)
	logged := 0
	for _, line := range lines {
		if strings.Contains(line, `"msg":"event"`) {
			logged++
			if !strings.Contains(line, `"subject":"/orders/`+order+`"`) && !strings.Contains(line, `"subject":"/users/2"`) {
				t.Errorf("an event line of another change: %s", line)
			}
		}
	}
	if logged != 2 {
		t.Errorf("%d event lines, want the order's and the deposit's", logged)
	}
}

// TestEventsAfterARestart: with DATA_DIR, make run delivers after a
// restart the events it had not delivered when it stopped, and none it had
// delivered. A deposit committed while the receiver is down is received
// first when make run starts again with the receiver up, then the next
// deposit. Started again without EVENTS_URL, the one event it logs, which
// delivers it, is that of a third deposit.
func TestEventsAfterARestart(t *testing.T) {
	ownDynamoDB(t)
	data := filepath.Join(t.TempDir(), "data")
	checkpoint := filepath.Join(data, checkpointFile)
	var down atomic.Bool
	down.Store(true)
	refused, taken := make(chan quire.Event, 1), make(chan quire.Event, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev quire.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("the receiver got %v", err)
		}
		if down.Load() {
			select {
			case refused <- ev:
			default:
			}
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		taken <- ev
	}))
	defer receiver.Close()
	next := func(events <-chan quire.Event) quire.Event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
			return quire.Event{}
		}
	}
	delivered := func() []string { // the ids the checkpoint names
		cp, err := local.ReadCheckpoint(checkpoint)
		if err != nil {
			return nil // not written yet
		}
		return slices.Collect(maps.Keys(cp.Delivered))
	}
	deposit := func(url string) {
		t.Helper()
		admin := login(t, url, demo.AdminEmail, demo.AdminPassword)
		call(t, url, admin, "POST /users/2/deposit", "", `{"amount": 1.00}`, http.StatusOK)
	}

	var pending quire.Event
	lines := serve(t, "text", func(url string) {
		deposit(url)
		pending = next(refused)
	}, "DATA_DIR", data, "EVENTS_URL", receiver.URL)
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.Contains(l, "stopped before EVENTS_URL took the event") && strings.Contains(l, "event_id="+pending.ID)
	}) {
		t.Errorf("no line that make run stopped before the receiver took %s:\n%s", pending.ID, strings.Join(lines, "\n"))
	}

	down.Store(false)
	var second quire.Event
	serve(t, "text", func(url string) {
		if ev := next(taken); ev.ID != pending.ID {
			t.Errorf("received %+v first after the restart, want the pending %s", ev, pending.ID)
		}
		deposit(url)
		if second = next(taken); second.ID == pending.ID || second.Type != quire.EventUserFunded {
			t.Errorf("received %+v after the pending event, want the next deposit's", second)
		}
		waitFor(t, "the checkpoint names the second deposit", func() bool {
			return slices.Contains(delivered(), second.ID)
		})
	}, "DATA_DIR", data, "EVENTS_URL", receiver.URL)

	lines = serve(t, "text", func(url string) {
		deposit(url)
		waitFor(t, "the checkpoint names a third event", func() bool {
			return slices.ContainsFunc(delivered(), func(id string) bool { return id != pending.ID && id != second.ID })
		})
	}, "DATA_DIR", data)
	var logged []string
	for _, line := range lines {
		if rec := parseText(line); rec["msg"] == "event" {
			logged = append(logged, rec["id"].(string))
		}
	}
	if len(logged) != 1 || logged[0] == pending.ID || logged[0] == second.ID {
		t.Errorf("started again without EVENTS_URL, make run logged the events %v, want the third deposit's alone (not %s nor %s)",
			logged, pending.ID, second.ID)
	}
}

// waitFor polls until cond holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, not yet: %s", what)
		}
	}
}

// login logs the demo account email in at url and returns the access
// token.
func login(t *testing.T, url, email, password string) string {
	t.Helper()
	body := call(t, url, "", "POST /login", "", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password), http.StatusOK)
	return body["access_token"].(string)
}

// call sends request ("POST /pay") to url with the token and idempotency
// key when set, and body, and returns the answer's JSON, failing the test
// unless its status is want.
func call(t *testing.T, url, token, request, key, body string, want int) map[string]any {
	t.Helper()
	method, path, _ := strings.Cut(request, " ")
	req, err := http.NewRequestWithContext(t.Context(), method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s = %d %s, want %d", request, res.StatusCode, b, want)
	}
	out := map[string]any{}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	_ = d.Decode(&out)
	return out
}
