package orders_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestPriceSeenIsPricePaid: a buyer who sends the ETag they read in
// If-Match pays the price they saw or nothing (412, nothing changed);
// without If-Match, the price read in the request is charged. The order
// records what was charged.
func TestPriceSeenIsPricePaid(t *testing.T) {
	s := newShop(t, "100")
	setPrice := func(price string) {
		t.Helper()
		s.admin.Expect(t, "PUT", "/admin/products/1", `{"name":"Frankenstein","price":`+price+`,"status":"AVAILABLE","author_id":1}`, 200)
	}
	unchanged := func(when, balance string, orders int) {
		t.Helper()
		if b, n := s.balance(t), len(s.orders(t)); b != balance || n != orders {
			t.Errorf("%s: balance %s and %d orders, want %s and %d", when, b, n, balance, orders)
		}
	}

	// One book: If-Match takes the product's ETag.
	seen := s.c.Expect(t, "GET", "/products/1", "", 200).Header.Get("ETag")
	setPrice("15.00")
	s.c.ExpectProblem(t, "POST", "/products/1/buy", `{"quantity":1}`, 412, quire.EPRECONDITION, "If-Match", seen)
	unchanged("a stale product ETag", "100.00", 0)
	fresh := s.c.Expect(t, "GET", "/api/v2/products/1", "", 200).Header.Get("ETag") // any version's tag serves
	o := servicetest.Decode[order](t, s.c.Do(t, "POST", "/products/1/buy", `{"quantity":1}`, "If-Match", fresh))
	if want := []item{{1, "Frankenstein", "15.00", 1, "15.00"}}; o.Total != "15.00" || !cmp.Equal(o.Items, want) {
		t.Errorf("bought with a current ETag: %+v", o)
	}
	setPrice("16.00")
	o = servicetest.Decode[order](t, s.c.Expect(t, "POST", "/products/1/buy", `{"quantity":1}`, 201))
	if o.Total != "16.00" || o.Items[0].Price != "16.00" {
		t.Errorf("bought without If-Match after a price change: %+v", o)
	}
	unchanged("two books bought", "69.00", 2)

	// The cart: If-Match takes GET /cart's ETag, which its books' prices
	// are part of.
	s.c.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":2}`, 200)
	seen = s.c.Expect(t, "GET", "/cart", "", 200).Header.Get("ETag")
	setPrice("17.00")
	s.c.ExpectProblem(t, "POST", "/pay", "", 412, quire.EPRECONDITION, "If-Match", seen, "Idempotency-Key", newKey())
	unchanged("a stale cart ETag", "69.00", 2)
	if c := s.cart(t); c == `{"items":[],"total":0.00}` {
		t.Error("the cart was emptied by a payment refused with 412")
	}
	fresh = s.c.Expect(t, "GET", "/cart", "", 200).Header.Get("ETag")
	if fresh == seen {
		t.Fatalf("the cart's ETag %s did not change with its book's price", seen)
	}
	r := s.c.Do(t, "POST", "/pay", "", "If-Match", fresh, "Idempotency-Key", newKey())
	if r.StatusCode != 201 {
		t.Fatalf("POST /pay with the cart's current ETag = %d %s", r.StatusCode, r.Body)
	}
	if o := servicetest.Decode[order](t, r); o.Total != "34.00" || o.Items[0].Price != "17.00" {
		t.Errorf("paid with a current ETag: %+v", o)
	}
	unchanged("the cart paid", "35.00", 3)

	// A malformed If-Match is the client's mistake, answered before any read.
	s.c.ExpectProblem(t, "POST", "/products/1/buy", `{"quantity":1}`, 400, quire.EINVALID, "If-Match", "not a tag")
	unchanged("a malformed If-Match", "35.00", 3)
}
