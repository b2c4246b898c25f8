package service_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestEventsOfEachWrite: each write a downstream system acts on publishes
// one event, of its type and one its route names (routes.Route.Events), about the resource its answer shows, with what
// the answer says (the order's total, the balance); sent again with its
// idempotency key, it publishes nothing more; a PUT that changes nothing
// publishes nothing. Every event is as its webhook describes it, and every
// version of every event the webhooks describe is published.
func TestEventsOfEachWrite(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{Demo: true})
	admin, grace := api.As(t, 1, quire.RoleAdmin), api.As(t, 2, quire.RoleCustomer)
	alan := api.As(t, 3, quire.RoleCustomer)
	const frankenstein = `{"name": "Frankenstein", "price": 12.99, "status": "AVAILABLE", "author_id": 1}`
	schemas, err := servicetest.EventSchemas()
	if err != nil {
		t.Fatal(err)
	}
	unpublished := slices.Sorted(maps.Keys(schemas)) // every version of every event the documents describe
	for _, tc := range []struct {
		name               string
		who                *servicetest.Client
		method, path, body string
		key                string // an idempotency key, sent twice
		status             int
		typ                string // "" for none
		also               string // a second event's type: product.changed beside an archive
		subject            string // "{id}": the answer's id
		data               map[string]string
	}{
		{name: "an admin closes an account", who: admin, method: "PUT", path: "/users/3",
			body:   `{"email": "alan@quire.example", "first_name": "Alan", "last_name": "Turing", "role": "customer", "status": "CLOSED"}`,
			status: http.StatusOK, typ: quire.EventUserClosed, subject: "/users/3", data: map[string]string{"user_id": "3"}},
		{name: "an admin reopens it", who: admin, method: "PUT", path: "/users/3",
			body:   `{"email": "alan@quire.example", "first_name": "Alan", "last_name": "Turing", "role": "customer", "status": "ACTIVE"}`,
			status: http.StatusOK, typ: quire.EventUserReopened, subject: "/users/3", data: map[string]string{"user_id": "3"}},
		{name: "an admin promotes it", who: admin, method: "PUT", path: "/users/3",
			body:   `{"email": "alan@quire.example", "first_name": "Alan", "last_name": "Turing", "role": "admin", "status": "ACTIVE"}`,
			status: http.StatusOK, typ: quire.EventUserChanged, subject: "/users/3", data: map[string]string{"changed": `["role"]`}},
		{name: "a new name", who: grace, method: "PUT", path: "/users/2",
			body:   `{"email": "grace@quire.example", "first_name": "Amazing", "last_name": "Grace"}`,
			status: http.StatusOK, typ: quire.EventUserChanged, subject: "/users/2", data: map[string]string{"changed": `["first_name","last_name"]`}},
		{name: "a profile", who: grace, method: "PUT", path: "/users/2/profile", body: `{"bio": "Rear admiral", "newsletter": false}`,
			status: http.StatusOK, typ: quire.EventUserChanged, subject: "/users/2", data: map[string]string{"changed": `["bio"]`}},
		{name: "a profile unchanged", who: grace, method: "PUT", path: "/users/2/profile", body: `{"bio": "Rear admiral", "newsletter": false}`,
			status: http.StatusOK},
		{name: "a deposit", who: admin, method: "POST", path: "/users/2/deposit", body: `{"amount": 5.00}`, key: "deposit",
			status: http.StatusOK, typ: quire.EventUserFunded, subject: "/users/2",
			data: map[string]string{"user_id": "2", "amount": "5.00", "balance": "55.00"}},
		{name: "a purchase", who: grace, method: "POST", path: "/products/1/buy", body: `{"quantity": 1}`, key: "buy",
			status: http.StatusCreated, typ: quire.EventOrderPlaced, subject: "/orders/{id}",
			data: map[string]string{"user_id": "2", "total": "12.99"}},
		{name: "a payment", who: grace, method: "POST", path: "/pay", key: "pay",
			status: http.StatusCreated, typ: quire.EventOrderPlaced, subject: "/orders/{id}", data: map[string]string{"user_id": "2"}},
		{name: "a sign-up", who: api.Anonymous(), method: "POST", path: "/users", key: "sign-up",
			body:   `{"email": "octavia@quire.example", "first_name": "Octavia", "last_name": "Butler", "password": "correct horse battery"}`,
			status: http.StatusCreated, typ: quire.EventUserCreated, subject: "/users/{id}", data: map[string]string{}},
		{name: "a new configuration document", who: admin, method: "PUT", path: "/admin/config", body: `{"theme": "dark"}`,
			status: http.StatusNoContent, typ: quire.EventConfigChanged, subject: "/config", data: map[string]string{"size": "16", "etag": "{etag}"}},
		{name: "the same document again", who: admin, method: "PUT", path: "/admin/config", body: `{"theme": "dark"}`,
			status: http.StatusNoContent},
		{name: "a new author", who: admin, method: "POST", path: "/admin/authors", key: "author", body: `{"name": "Octavia Butler"}`,
			status: http.StatusCreated, typ: quire.EventAuthorCreated, subject: "/authors/{id}",
			data: map[string]string{"name": "Octavia Butler"}},
		{name: "a new product", who: admin, method: "POST", path: "/admin/products", key: "product",
			body:   `{"name": "Kindred", "price": 9.99, "status": "AVAILABLE", "author_id": 1}`,
			status: http.StatusCreated, typ: quire.EventProductCreated, subject: "/products/{id}",
			data: map[string]string{"name": "Kindred", "price": "9.99", "status": "AVAILABLE", "author_id": "1"}},
		{name: "a product unchanged", who: admin, method: "PUT", path: "/admin/products/1", body: frankenstein, status: http.StatusOK},
		{name: "a new price", who: admin, method: "PUT", path: "/admin/products/1",
			body:   strings.Replace(frankenstein, "12.99", "13.50", 1),
			status: http.StatusOK, typ: quire.EventProductChanged, subject: "/products/1",
			data: map[string]string{"product_id": "1", "price": "13.50", "changed": `["price"]`}},
		// A product that comes back to a state it had is a change of its
		// own, with an id of its own.
		{name: "the price back", who: admin, method: "PUT", path: "/admin/products/1", body: frankenstein,
			status: http.StatusOK, typ: quire.EventProductChanged, subject: "/products/1",
			data: map[string]string{"price": "12.99", "changed": `["price"]`}},
		{name: "the new price again", who: admin, method: "PUT", path: "/admin/products/1",
			body:   strings.Replace(frankenstein, "12.99", "13.50", 1),
			status: http.StatusOK, typ: quire.EventProductChanged, subject: "/products/1",
			data: map[string]string{"price": "13.50", "changed": `["price"]`}},
		{name: "an archiving", who: admin, method: "PUT", path: "/api/v2/admin/products/1",
			body:   strings.Replace(strings.Replace(frankenstein, "12.99", "13.50", 1), "AVAILABLE", "ARCHIVED", 1),
			status: http.StatusOK, typ: quire.EventProductArchived, subject: "/products/1", data: map[string]string{"product_id": "1"}},
		{name: "an archiving at a new price", who: admin, method: "PUT", path: "/api/v2/admin/products/2",
			body:   `{"name": "The Last Man", "price": 9.00, "status": "ARCHIVED", "author_id": 1}`,
			status: http.StatusOK, typ: quire.EventProductArchived, also: quire.EventProductChanged, subject: "/products/2",
			data: map[string]string{"product_id": "2"}},
		{name: "a closing", who: alan, method: "POST", path: "/users/3/close", key: "close",
			status: http.StatusOK, typ: quire.EventUserClosed, subject: "/users/3", data: map[string]string{"user_id": "3"}},
		{name: "a deletion", who: admin, method: "DELETE", path: "/users/3",
			status: http.StatusNoContent, typ: quire.EventUserDeleted, subject: "/users/3", data: map[string]string{"user_id": "3"}},
	} {
		before := len(api.Events(t))
		var header []string
		if tc.key != "" {
			header = []string{"Idempotency-Key", tc.key}
		}
		r := tc.who.Do(t, tc.method, tc.path, tc.body, header...)
		if r.StatusCode != tc.status {
			t.Fatalf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.path, r.StatusCode, r.Body, tc.status)
		}
		if tc.key != "" {
			if again := tc.who.Do(t, tc.method, tc.path, tc.body, header...); again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s: sent again with its key, not a replay: %d %v", tc.name, again.StatusCode, again.Header)
			}
		}
		published := api.Events(t)[before:]
		for _, ev := range published {
			unpublished = slices.DeleteFunc(unpublished, func(s string) bool { return s == ev.DataSchema })
		}
		template, _, _ := routes.Match(tc.path)
		for _, ev := range published { // what the code publishes, the route table says
			if rt, ok := routes.Find(tc.method, template); !ok || !slices.Contains(rt.Events, ev.Type) {
				t.Errorf("%s: %s %s published %s, which its route's Events (%v) do not name", tc.name, tc.method, template, ev.Type, rt.Events)
			}
		}
		if tc.typ == "" {
			if len(published) != 0 {
				t.Errorf("%s: published %v, want nothing", tc.name, published)
			}
			continue
		}
		if tc.also != "" { // the two in either order: they have one time
			if len(published) == 2 && published[0].Type == tc.also {
				published[0], published[1] = published[1], published[0]
			}
			if len(published) != 2 || published[1].Type != tc.also || published[1].Subject != published[0].Subject {
				t.Errorf("%s: published %v, want %s and %s", tc.name, published, tc.typ, tc.also)
				continue
			}
			if !strings.Contains(string(published[1].Data), `"changed":["price"]`) {
				t.Errorf("%s: %s says %s, want the price changed", tc.name, tc.also, published[1].Data)
			}
			published = published[:1]
		}
		if len(published) != 1 {
			t.Errorf("%s: published %v, want one %s", tc.name, published, tc.typ)
			continue
		}
		ev := published[0]
		var answer struct {
			ID json.Number `json:"id"`
		}
		d := json.NewDecoder(strings.NewReader(r.Body))
		d.UseNumber()
		_ = d.Decode(&answer)
		subject := strings.Replace(tc.subject, "{id}", answer.ID.String(), 1)
		var data map[string]json.RawMessage
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		if ev.Type != tc.typ || ev.Subject != subject {
			t.Errorf("%s: published %s about %s, want %s about %s", tc.name, ev.Type, ev.Subject, tc.typ, subject)
		}
		for k, want := range tc.data {
			if want == "{etag}" { // the answer's, as a JSON string
				b, _ := json.Marshal(r.Header.Get("ETag"))
				want = strings.Trim(string(b), `"`)
			}
			if got := strings.Trim(string(data[k]), `"`); got != want {
				t.Errorf("%s: data %s = %s, want %s (%s)", tc.name, k, got, want, ev.Data)
			}
		}
		for _, secret := range []string{"@", "password", "token"} {
			if strings.Contains(string(ev.Data), secret) {
				t.Errorf("%s: the event's data holds %q: %s", tc.name, secret, ev.Data)
			}
		}
	}
	if len(unpublished) > 0 {
		t.Errorf("no write published %v, which the documents' webhooks describe", unpublished)
	}
}
