package orders_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

type item struct {
	ProductID int64       `json:"product_id"`
	Name      string      `json:"name"`
	Price     json.Number `json:"price"`
	Quantity  int         `json:"quantity"`
	Subtotal  json.Number `json:"subtotal"`
}

type order struct {
	ID        int64       `json:"id"`
	UserID    int64       `json:"user_id"`
	Items     []item      `json:"items"`
	Total     json.Number `json:"total"`
	CreatedAt string      `json:"created_at"`
}

// shop is the demo catalog and a customer with the given balance.
type shop struct {
	api      *servicetest.API
	c, admin *servicetest.Client
	id       int64
}

func newShop(t *testing.T, balance string, opts ...servicetest.Option) *shop {
	t.Helper()
	api := servicetest.New(t, opts...)
	api.SeedCatalog(t)
	r := api.Do(t, "POST", "/users", `{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","password":"correct horse"}`)
	if r.StatusCode != 201 {
		t.Fatalf("sign up: %d %s", r.StatusCode, r.Body)
	}
	var u struct{ ID int64 }
	if err := json.Unmarshal([]byte(r.Body), &u); err != nil {
		t.Fatal(err)
	}
	s := &shop{api: api, c: api.As(t, quire.ID(u.ID), quire.RoleCustomer), admin: api.As(t, 1, quire.RoleAdmin), id: u.ID}
	if balance != "0" {
		s.admin.Expect(t, "POST", fmt.Sprintf("/users/%d/deposit", u.ID), `{"amount":`+balance+`}`, 200)
	}
	return s
}

// pay pays the cart with a new idempotency key and checks the status.
func (s *shop) pay(t *testing.T, status int) servicetest.Response {
	t.Helper()
	r := s.c.Do(t, "POST", "/pay", "", "Idempotency-Key", newKey())
	if r.StatusCode != status {
		t.Fatalf("POST /pay = %d %s, want %d", r.StatusCode, r.Body, status)
	}
	return r
}

// refusePay pays the cart with a new idempotency key and checks that it is
// refused with a 409 of code's type.
func (s *shop) refusePay(t *testing.T, code string) {
	t.Helper()
	s.c.ExpectProblem(t, "POST", "/pay", "", 409, code, "Idempotency-Key", newKey())
}

var keys atomic.Int64

func newKey() string { return fmt.Sprintf("test-key-%d", keys.Add(1)) }

func (s *shop) balance(t *testing.T) string {
	t.Helper()
	var u struct{ Balance json.Number }
	dec := json.NewDecoder(strings.NewReader(s.c.Expect(t, "GET", fmt.Sprintf("/users/%d", s.id), "", 200).Body))
	dec.UseNumber()
	if err := dec.Decode(&u); err != nil {
		t.Fatal(err)
	}
	return string(u.Balance)
}

func (s *shop) orders(t *testing.T) []order {
	t.Helper()
	return servicetest.Decode[[]order](t, s.c.Expect(t, "GET", "/orders", "", 200))
}

func (s *shop) cart(t *testing.T) string {
	t.Helper()
	return s.c.Expect(t, "GET", "/cart", "", 200).Body
}

func TestBuy(t *testing.T) {
	s := newShop(t, "30")
	r := s.c.Expect(t, "POST", "/products/1/buy", `{"quantity":2}`, 201)
	o := servicetest.Decode[order](t, r)
	want := []item{{1, "Frankenstein", "12.99", 2, "25.98"}}
	if o.UserID != s.id || o.Total != "25.98" || !cmp.Equal(o.Items, want) {
		t.Errorf("order %+v", o)
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, fmt.Sprintf("/orders/%d", o.ID)) {
		t.Errorf("Location %q", loc)
	}
	if b := s.balance(t); b != "4.02" {
		t.Errorf("balance %s, want 4.02", b)
	}
	if got := servicetest.Decode[order](t, s.c.Expect(t, "GET", fmt.Sprintf("/orders/%d", o.ID), "", 200)); !cmp.Equal(got, o) {
		t.Errorf("stored order %+v, want %+v", got, o)
	}
	if got := s.orders(t); len(got) != 1 || got[0].ID != o.ID {
		t.Errorf("GET /orders = %+v", got)
	}

	// Refusals pay nothing and order nothing.
	s.c.ExpectProblem(t, "POST", "/products/1/buy", `{"quantity":1}`, 409, quire.EINSUFFICIENTFUNDS)  // 12.99 > 4.02
	s.c.ExpectProblem(t, "POST", "/products/4/buy", `{"quantity":1}`, 409, quire.EPRODUCTUNAVAILABLE) // discontinued
	s.c.Expect(t, "POST", "/products/999/buy", `{"quantity":1}`, 404)                                 // no such book
	for _, bad := range []string{`{"quantity":0}`, `{"quantity":100}`, `{}`, `{"quantity":1.5}`} {
		s.c.Expect(t, "POST", "/products/3/buy", bad, 400)
	}
	if b := s.balance(t); b != "4.02" {
		t.Errorf("after refusals, balance %s", b)
	}
	if got := s.orders(t); len(got) != 1 {
		t.Errorf("after refusals, %d orders", len(got))
	}

	// Orders are their buyer's: another customer gets 404, an admin any.
	s.api.As(t, 2, quire.RoleCustomer).Expect(t, "GET", fmt.Sprintf("/orders/%d", o.ID), "", 404)
	if got := servicetest.Decode[order](t, s.admin.Expect(t, "GET", fmt.Sprintf("/orders/%d", o.ID), "", 200)); got.ID != o.ID {
		t.Errorf("admin reads %+v", got)
	}
	s.admin.Expect(t, "GET", "/orders/12345", "", 404)
}

func TestPay(t *testing.T) {
	s := newShop(t, "50")
	s.refusePay(t, quire.ECARTEMPTY)
	s.c.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":1}`, 200)
	s.c.Expect(t, "POST", "/cart", `{"product_id":3,"quantity":2}`, 200)
	o := servicetest.Decode[order](t, s.pay(t, 201))
	want := []item{{1, "Frankenstein", "12.99", 1, "12.99"}, {3, "Pride and Prejudice", "9.99", 2, "19.98"}}
	if o.Total != "32.97" || !cmp.Equal(o.Items, want) {
		t.Errorf("order %+v", o)
	}
	if b := s.balance(t); b != "17.03" {
		t.Errorf("balance %s, want 17.03", b)
	}
	if c := s.cart(t); c != `{"items":[],"total":0.00}` {
		t.Errorf("cart after paying: %s", c)
	}
	s.refusePay(t, quire.ECARTEMPTY) // empty again
}

// TestPayRefusalsChangeNothing: a short balance, a closed account and an
// archived book each refuse the payment and leave balance, cart and orders
// as they were.
func TestPayRefusalsChangeNothing(t *testing.T) {
	s := newShop(t, "20")
	s.c.Expect(t, "POST", "/cart", `{"product_id":5,"quantity":2}`, 200) // 29.00
	check := func(when string) {
		t.Helper()
		if b, c, n := s.balance(t), s.cart(t), len(s.orders(t)); b != "20.00" || !strings.Contains(c, `"total":29.00`) || n != 0 {
			t.Errorf("%s: balance %s, cart %s, %d orders", when, b, c, n)
		}
	}
	s.refusePay(t, quire.EINSUFFICIENTFUNDS)
	check("short balance")

	s.admin.Expect(t, "POST", fmt.Sprintf("/users/%d/deposit", s.id), `{"amount":10}`, 200)
	s.admin.Expect(t, "PUT", "/api/v2/admin/products/5", `{"name":"Moby-Dick","price":14.50,"status":"ARCHIVED","author_id":3}`, 200)
	s.refusePay(t, quire.EPRODUCTUNAVAILABLE)
	s.c.ExpectProblem(t, "POST", "/products/5/buy", `{"quantity":1}`, 409, quire.EPRODUCTUNAVAILABLE)
	s.admin.Expect(t, "PUT", "/admin/products/5", `{"name":"Moby-Dick","price":14.50,"status":"AVAILABLE","author_id":3}`, 200)
	s.c.Expect(t, "POST", fmt.Sprintf("/users/%d/close", s.id), "", 200)
	s.refusePay(t, quire.EACCOUNTCLOSED)
	s.c.ExpectProblem(t, "POST", "/products/1/buy", `{"quantity":1}`, 409, quire.EACCOUNTCLOSED)
	if b, n := s.balance(t), len(s.orders(t)); b != "30.00" || n != 0 {
		t.Errorf("closed account: balance %s, %d orders", b, n)
	}
}

// TestConcurrentPayments: payments that race on one balance never overdraw
// it, and a cart paid twice at once is paid once, though their
// transactions conflict as they do on DynamoDB.
func TestConcurrentPayments(t *testing.T) {
	p, conflicts := servicetest.Conflicts(t)
	defer func() { t.Logf("%d transaction conflicts", p.Injected()[ddbfault.Conflict]) }()
	s := newShop(t, "30", conflicts)
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() { statuses[i] = s.c.Do(t, "POST", "/products/3/buy", `{"quantity":1}`).StatusCode })
	}
	wg.Wait()
	bought := 0
	for _, st := range statuses {
		switch st {
		case 201:
			bought++
		case 409:
		default:
			t.Errorf("a concurrent buy answered %d", st)
		}
	}
	if bought != 3 || s.balance(t) != "0.03" || len(s.orders(t)) != 3 {
		t.Errorf("%d buys of 9.99 from 30.00 succeeded; balance %s, %d orders; want 3, 0.03, 3", bought, s.balance(t), len(s.orders(t)))
	}

	s = newShop(t, "100", conflicts)
	s.c.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":1}`, 200)
	for i := range n {
		wg.Go(func() { statuses[i] = s.c.Do(t, "POST", "/pay", "", "Idempotency-Key", newKey()).StatusCode })
	}
	wg.Wait()
	paid := 0
	for _, st := range statuses {
		if st == 201 {
			paid++
		} else if st != 409 {
			t.Errorf("a concurrent payment answered %d", st)
		}
	}
	if paid != 1 || s.balance(t) != "87.01" || len(s.orders(t)) != 1 {
		t.Errorf("one cart paid %d times at once; balance %s, %d orders", paid, s.balance(t), len(s.orders(t)))
	}
}

func TestOrderPages(t *testing.T) {
	s := newShop(t, "100")
	var want []int64
	for range 5 {
		want = append(want, servicetest.Decode[order](t, s.c.Expect(t, "POST", "/products/3/buy", `{"quantity":1}`, 201)).ID)
	}
	// Oldest first, to the millisecond: orders made in one millisecond (the
	// in-memory store takes less) list in the order of their ids' random
	// bits.
	slices.Sort(want)
	var got []int64
	next := "/orders?limit=2"
	for next != "" {
		r := s.c.Expect(t, "GET", next, "", 200)
		for _, o := range servicetest.Decode[[]order](t, r) {
			got = append(got, o.ID)
		}
		next = ""
		if l := r.Header.Get("Link"); l != "" {
			next = l[strings.Index(l, "/orders"):strings.Index(l, ">")]
		}
	}
	if !cmp.Equal(got, want) {
		t.Errorf("orders by pages %v, want %v", got, want)
	}
}
