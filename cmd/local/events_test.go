package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/demo"
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
