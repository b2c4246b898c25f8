package service_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// shop runs Quire with the demo data, and returns clients of the demo
// admin (id 1) and customer Grace (id 2).
func shop(t *testing.T, opts ...servicetest.Option) (admin, grace *servicetest.Client) {
	t.Helper()
	api := servicetest.New(t, append(opts, servicetest.Option{Demo: true})...)
	return api.As(t, 1, quire.RoleAdmin), api.As(t, 2, quire.RoleCustomer)
}

var strongTag = regexp.MustCompile(`^"[A-Za-z0-9_-]{22}-v[12]"$`)

// tag GETs path and returns its ETag, failing unless the answer is a 200
// with a strong ETag and the Cache-Control of what it holds: no-store for
// someone's data, private, no-cache for the catalog and the configuration
// document, which a client may keep and revalidate.
func tag(t *testing.T, c *servicetest.Client, path string, header ...string) string {
	t.Helper()
	r := c.Do(t, "GET", path, "", header...)
	tag := r.Header.Get("ETag")
	policy := "no-store"
	if shared := regexp.MustCompile(`^(/api/v\d)?/(products|authors|config)\b`); shared.MatchString(path) {
		policy = "private, no-cache"
	}
	if r.StatusCode != http.StatusOK || !strongTag.MatchString(tag) || r.Header.Get("Cache-Control") != policy {
		t.Fatalf("GET %s = %d, ETag %q, Cache-Control %q; want 200 with a strong ETag, %s", path, r.StatusCode, tag, r.Header.Get("Cache-Control"), policy)
	}
	return tag
}

// Every resource GET sends an ETag per representation; If-None-Match
// with it (or its weak form) is 304 with no body.
func TestEveryResourceRevalidates(t *testing.T) {
	admin, grace := shop(t)
	for _, c := range []struct {
		who  *servicetest.Client
		path string
	}{
		{grace, "/users/2"}, {grace, "/users/2?embed=profile"}, {grace, "/users/2/profile"},
		{grace, "/products/1"}, {grace, "/authors/1"}, {grace, "/orders/1"}, {grace, "/cart"}, {grace, "/config"},
		{grace, "/products"}, {grace, "/authors/1/books"}, {grace, "/orders"}, {admin, "/users"}, {admin, "/admin/users?limit=1"},
	} {
		t.Run(c.path, func(t *testing.T) {
			v1 := tag(t, c.who, c.path)
			if v2 := tag(t, c.who, "/api/v2"+c.path); v2 == v1 {
				t.Errorf("v1 and v2 share the ETag %s", v1)
			}
			if again := tag(t, c.who, c.path); again != v1 {
				t.Errorf("ETag %s, then %s with nothing changed", v1, again)
			}
			for _, inm := range []string{v1, "W/" + v1, `"x", ` + v1} {
				r := c.who.Do(t, "GET", c.path, "", "If-None-Match", inm)
				if r.StatusCode != http.StatusNotModified || r.Body != "" || r.Header.Get("ETag") != v1 ||
					!strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Accept") || r.Header.Get("Cache-Control") == "" {
					t.Errorf("If-None-Match %s = %d %v %q; want 304 with ETag, Vary and Cache-Control", inm, r.StatusCode, r.Header, r.Body)
				}
			}
			if r := c.who.Do(t, "GET", c.path, "", "If-None-Match", `"`+strings.Repeat("A", 22)+`-v1"`); r.StatusCode != http.StatusOK {
				t.Errorf("another tag = %d, want 200", r.StatusCode)
			}
		})
	}
}

// A change gives a new ETag to what shows it: a deposit to the user (and
// its profile, kept in the same item), a new price to the product and the
// carts that hold it.
func TestChangesGiveNewETags(t *testing.T) {
	admin, grace := shop(t)
	user, profile, product, cart := tag(t, grace, "/users/2"), tag(t, grace, "/users/2/profile"), tag(t, grace, "/products/3"), tag(t, grace, "/cart")
	admin.Expect(t, "POST", "/users/2/deposit", `{"amount": 1.00}`, http.StatusOK)
	if tag(t, grace, "/users/2") == user || tag(t, grace, "/users/2/profile") == profile {
		t.Error("a deposit left the user's ETags as they were")
	}
	admin.Expect(t, "PUT", "/admin/products/3", `{"name":"Pride and Prejudice","price":10.99,"status":"AVAILABLE","author_id":2}`, http.StatusOK)
	if tag(t, grace, "/products/3") == product || tag(t, grace, "/cart") == cart {
		t.Error("a new price left the product's or the cart's ETag as it was")
	}
	cart = tag(t, grace, "/cart")
	grace.Expect(t, "POST", "/cart", `{"product_id": 2, "quantity": 1}`, http.StatusOK)
	if tag(t, grace, "/cart") == cart {
		t.Error("an addition left the cart's ETag as it was")
	}
}

// If-Match on PUT and DELETE: a stale tag is 412 and changes nothing; the
// current one (of any representation) lets the write through, whose answer
// carries the new tag.
func TestIfMatch(t *testing.T) {
	admin, grace := shop(t)
	before := grace.Do(t, "GET", "/users/2", "")
	old := before.Header.Get("ETag")
	body := `{"email":"grace@quire.example","first_name":"Grace","last_name":"Brewster Hopper"}`
	r := grace.Do(t, "PUT", "/users/2", body, "If-Match", old)
	if r.StatusCode != http.StatusOK || r.Header.Get("ETag") == old || r.Header.Get("ETag") != tag(t, grace, "/users/2") {
		t.Fatalf("PUT with the current tag = %d, ETag %s; want 200 with the new tag GET shows", r.StatusCode, r.Header.Get("ETag"))
	}
	now := grace.Do(t, "GET", "/users/2", "")
	for _, h := range [][]string{
		{"If-Match", old}, // stale
		{"If-Match", "W/" + tag(t, grace, "/users/2")}, // weak: never for writes
		{"If-None-Match", "*"},                         // create-only, and it exists
	} {
		r := grace.Do(t, "PUT", "/users/2", `{"email":"grace@quire.example","first_name":"G","last_name":"H"}`, h...)
		if r.StatusCode != http.StatusPreconditionFailed {
			t.Errorf("PUT with %q = %d %s, want 412", h, r.StatusCode, r.Body)
		}
		for _, p := range []string{"/users/2/profile", "/users/2"} {
			if r := grace.Do(t, "PUT", p, map[string]string{"/users/2/profile": `{"bio":"changed"}`, "/users/2": body}[p], h...); r.StatusCode != http.StatusPreconditionFailed {
				t.Errorf("PUT %s with %q = %d, want 412", p, h, r.StatusCode)
			}
		}
		if r := grace.Do(t, "DELETE", "/users/2", `{"current_password":"`+demo.CustomerPassword+`"}`, h...); r.StatusCode != http.StatusPreconditionFailed {
			t.Errorf("DELETE with %q = %d, want 412", h, r.StatusCode)
		}
	}
	if after := grace.Do(t, "GET", "/users/2", ""); after.Body != now.Body || after.Header.Get("ETag") != now.Header.Get("ETag") {
		t.Errorf("failed preconditions changed the user:\n%s\nwas\n%s", after.Body, now.Body)
	}
	// A v2 tag serves a v1 write: the same stored state.
	v2 := tag(t, grace, "/api/v2/users/2/profile")
	grace.Expect(t, "PUT", "/users/2/profile", `{"bio":"Admiral"}`, http.StatusOK)
	if r := grace.Do(t, "PUT", "/users/2/profile", `{"bio":"Rear admiral"}`, "If-Match", v2); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("PUT profile with a tag from before a change = %d", r.StatusCode)
	}
	v2 = tag(t, grace, "/api/v2/users/2/profile")
	if r := grace.Do(t, "PUT", "/users/2/profile", `{"bio":"Rear admiral"}`, "If-Match", v2); r.StatusCode != http.StatusOK {
		t.Errorf("PUT profile with the current v2 tag = %d %s", r.StatusCode, r.Body)
	}
	// Products, as admins replace them.
	product := tag(t, admin, "/products/2")
	write := `{"name":"Pride and Prejudice","price":9.99,"status":"AVAILABLE","author_id":2}`
	admin.Expect(t, "PUT", "/admin/products/2", write, http.StatusOK)
	if r := admin.Do(t, "PUT", "/admin/products/2", strings.Replace(write, "9.99", "1.00", 1), "If-Match", product); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("PUT product with a stale tag = %d", r.StatusCode)
	}
	if r := admin.Do(t, "GET", "/products/2", ""); !strings.Contains(r.Body, `"price":9.99`) {
		t.Errorf("a failed PUT changed the product: %s", r.Body)
	}
	// Deleting with the current tag works; the user is gone.
	admin.Expect(t, "DELETE", "/users/3", "", http.StatusNoContent)
	admin.Expect(t, "DELETE", "/users/2", "", http.StatusNoContent)
	// A cart line has no ETag: If-Match names none of it but "*".
	if r := admin.Do(t, "DELETE", "/cart/items/1", "", "If-Match", tag(t, admin, "/cart")); r.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE of a line not in the cart = %d, want 404 before any precondition", r.StatusCode)
	}
}

func TestCartLinePreconditions(t *testing.T) {
	_, grace := shop(t)
	if r := grace.Do(t, "DELETE", "/cart/items/3", "", "If-Match", tag(t, grace, "/cart")); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("DELETE of a cart line with a tag = %d, want 412", r.StatusCode)
	}
	if r := grace.Do(t, "DELETE", "/cart/items/3", "", "If-Match", "*"); r.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE of a cart line with If-Match: * = %d, want 204", r.StatusCode)
	}
}

// Writers holding the same ETag race: the condition DynamoDB checks on the
// stored hash lets exactly one win, whichever resource it is, on DynamoDB
// too (its transaction conflicts emulated; these writes are single-item
// ones, which conflict only with transactions: see contention_test.go).
func TestConcurrentWritersHoldingOneTag(t *testing.T) {
	_, conflicts := servicetest.Conflicts(t)
	admin, grace := shop(t, conflicts)
	for _, c := range []struct {
		who         *servicetest.Client
		path, write string
		body        func(int) string
	}{
		{grace, "/users/2", "/users/2", func(i int) string {
			return fmt.Sprintf(`{"email":"grace@quire.example","first_name":"Grace","last_name":"Writer %d"}`, i)
		}},
		{grace, "/users/2/profile", "/users/2/profile", func(i int) string { return fmt.Sprintf(`{"bio":"writer %d"}`, i) }},
		{admin, "/products/3", "/admin/products/3", func(i int) string {
			return fmt.Sprintf(`{"name":"Writer %d","price":5.00,"status":"AVAILABLE","author_id":3}`, i)
		}},
	} {
		t.Run(c.path, func(t *testing.T) {
			held := tag(t, c.who, c.path)
			const writers = 8
			statuses := make([]int, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() { statuses[i] = c.who.Do(t, "PUT", c.write, c.body(i), "If-Match", held).StatusCode })
			}
			wg.Wait()
			winner := -1
			for i, s := range statuses {
				switch {
				case s == http.StatusOK && winner < 0:
					winner = i
				case s != http.StatusPreconditionFailed:
					t.Fatalf("statuses %v; want one 200 and 412s", statuses)
				}
			}
			if winner < 0 {
				t.Fatalf("statuses %v: nobody won", statuses)
			}
			if got := c.who.Do(t, "GET", c.path, "").Body; !strings.Contains(got, fmt.Sprintf("riter %d", winner)) {
				t.Errorf("stored %s; want writer %d's", got, winner)
			}
		})
	}
}
