package service_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
	"github.com/quireapi/quire/internal/users"
)

// Customers buying one book at once never contend, on DynamoDB too (whose
// transaction conflicts the proxy emulates): 50 buy it outright and 50 pay
// carts that hold it, all at the same moment, each with an idempotency key,
// and none meets a transaction conflict. Each is a client as
// docs/faults.md describes, which sends a 503 (DynamoDB Local, one
// transaction at a time on a busy machine, may answer after the client's
// attempt timeout) again after Retry-After with the same key: in the end
// every one is answered 201, none 409, is debited once and has the one
// order its answer names.
func TestBuyersOfOneBookDoNotContend(t *testing.T) {
	const buyers, payers = 50, 50
	p, conflicts := servicetest.Conflicts(t)
	api := servicetest.New(t, conflicts)
	if err := demo.SeedCatalog(t.Context(), dynamo.NewCatalogStore(api.DB, api.Tables)); err != nil {
		t.Fatal(err)
	}
	customers := readers(t, api, buyers, payers)
	before := p.Injected()[ddbfault.Conflict]

	answers := make([]servicetest.Response, len(customers))
	start := make(chan struct{})
	var ready sync.WaitGroup
	ready.Add(len(customers))
	go func() { ready.Wait(); close(start) }()
	each(len(customers), len(customers), func(i int) {
		ready.Done()
		<-start
		key := fmt.Sprintf("purchase-%d", i)
		if c := customers[i]; c.payer {
			answers[i] = c.Retry(t, "POST", "/pay", "", "Idempotency-Key", key)
		} else {
			answers[i] = c.Retry(t, "POST", fmt.Sprintf("/products/%d/buy", book), `{"quantity": 1}`, "Idempotency-Key", key)
		}
	})

	statuses := map[int]int{}
	for _, a := range answers {
		statuses[a.StatusCode]++
	}
	conflicted := p.Injected()[ddbfault.Conflict] - before
	t.Logf("answers by status: %v; %d transaction conflicts", statuses, conflicted)
	if statuses[http.StatusCreated] != len(customers) {
		t.Errorf("answers by status %v, want all %d 201", statuses, len(customers))
	}
	if conflicted != 0 {
		t.Errorf("%d transaction conflicts, want none: the buyers contend, each conflict a cancelled transaction "+
			"DynamoDB charges for and a retry that delays the answer", conflicted)
	}
	each(len(customers), setupWorkers, func(i int) { customers[i].paidOnce(t, answers[i]) })
}

// A purchase whose every DynamoDB answer is lost, as when DynamoDB Local on
// a busy machine answers after the client's attempt timeout, is answered
// 503 with Retry-After though it took effect. A buyer who sends it again as
// docs/faults.md says (servicetest.Client.Retry), with the same key, is
// answered the order it placed (a replay), debited once: for a book bought
// outright and for a cart paid.
func TestARetriedPurchaseIsServedOnce(t *testing.T) {
	t.Parallel()
	p, faults := servicetest.Faults(t)
	api := servicetest.New(t, faults)
	if err := demo.SeedCatalog(t.Context(), dynamo.NewCatalogStore(api.DB, api.Tables)); err != nil {
		t.Fatal(err)
	}
	for i, c := range readers(t, api, 1, 1) {
		p.Set(ddbfault.Rule{Fault: ddbfault.Lost, Operation: "TransactWriteItems", Count: dynamo.MaxAttempts})
		lost := p.Injected()[ddbfault.Lost]
		method, path, body := "POST", fmt.Sprintf("/products/%d/buy", book), `{"quantity": 1}`
		if c.payer {
			path, body = "/pay", ""
		}
		r := c.Retry(t, method, path, body, "Idempotency-Key", fmt.Sprint("lost-", i))
		if n := p.Injected()[ddbfault.Lost] - lost; n != dynamo.MaxAttempts {
			t.Fatalf("%s: %d answers lost, want every attempt's of the first request (%d)", path, n, dynamo.MaxAttempts)
		}
		// Only a request sent again replays.
		if r.Header.Get(rest.ReplayedHeader) != "true" {
			t.Errorf("%s = %d %v, want the first request's order, replayed", path, r.StatusCode, r.Header)
		}
		c.paidOnce(t, r)
	}
}

// The book the readers buy, its price, what they are funded with and what
// they have left after buying it once.
const (
	book                    = 3 // Pride and Prejudice
	price, funds, fundsLeft = "9.99", "20.00", "10.01"
)

// reader is a customer funded to buy one book; a payer holds it in its cart.
type reader struct {
	*servicetest.Client
	id    quire.ID
	payer bool
}

// readers creates buyers and then payers, funds each with the admin's
// deposit and fills each payer's cart with the book.
func readers(t *testing.T, api *servicetest.API, buyers, payers int) []reader {
	t.Helper()
	admin := api.As(t, 1, quire.RoleAdmin)
	store := dynamo.NewUserStore(api.DB, api.Tables)
	rs := make([]reader, buyers+payers)
	each(len(rs), setupWorkers, func(i int) {
		u := users.User{
			Email: fmt.Sprintf("reader-%d@example.com", i), FirstName: "Reader", LastName: fmt.Sprint(i),
			Role: quire.RoleCustomer, Status: users.StatusActive,
		}
		u, err := users.Create(t.Context(), store, u, "")
		if err != nil {
			t.Errorf("create reader %d: %v", i, err)
			return
		}
		rs[i] = reader{Client: api.As(t, u.ID, quire.RoleCustomer), id: u.ID, payer: i >= buyers}
		deposit := fmt.Sprintf("/users/%d/deposit", u.ID)
		if r := admin.Retry(t, "POST", deposit, `{"amount": `+funds+`}`, "Idempotency-Key", deposit); r.StatusCode != http.StatusOK {
			t.Errorf("fund reader %d: %d %s", i, r.StatusCode, r.Body)
		}
		if !rs[i].payer {
			return
		}
		body := fmt.Sprintf(`{"product_id": %d, "quantity": 1}`, book)
		if r := rs[i].Retry(t, "POST", "/cart", body, "Idempotency-Key", "fill"); r.StatusCode != http.StatusOK {
			t.Errorf("fill the cart of reader %d: %d %s", i, r.StatusCode, r.Body)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return rs
}

// paidOnce checks that the reader's purchase, which answered a, was
// debited once and stored as the order a names. It may run on any
// goroutine.
func (r reader) paidOnce(t *testing.T, a servicetest.Response) {
	var placed struct{ ID int64 }
	if a.StatusCode != http.StatusCreated || json.Unmarshal([]byte(a.Body), &placed) != nil {
		t.Errorf("reader %d's purchase = %d %s, want 201 with the order", r.id, a.StatusCode, a.Body)
	}
	var u struct{ Balance json.Number }
	if err := get(t, r.Client, fmt.Sprintf("/users/%d", r.id), &u); err != nil || u.Balance != fundsLeft {
		t.Errorf("reader %d has %s left of %s (%v), want %s: debited once", r.id, u.Balance, funds, err, fundsLeft)
	}
	var orders []struct {
		ID    int64
		Total json.Number
	}
	err := get(t, r.Client, "/orders", &orders)
	if err != nil || len(orders) != 1 || orders[0].Total != price || placed.ID != 0 && orders[0].ID != placed.ID {
		t.Errorf("reader %d has the orders %+v (%v), want the one of %s its answer named (%d)", r.id, orders, err, price, placed.ID)
	}
}

// setupWorkers is how many requests a test sends at once to set up or
// check what it is about: DynamoDB Local runs one transaction at a time.
const setupWorkers = 8

// each runs f(0) to f(n-1), at most workers at once, and waits for them.
func each(n, workers int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// get reads path as c into v, numbers as json.Number, as a client that
// retries (servicetest.Client.Retry), and returns an error unless it
// answers 200. Unlike Expect, it may run on any goroutine.
func get(t *testing.T, c *servicetest.Client, path string, v any) error {
	r := c.Retry(t, "GET", path, "")
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s = %d %s", path, r.StatusCode, r.Body)
	}
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	return dec.Decode(v)
}

// A single-item write that meets a transaction on its item, which DynamoDB
// refuses with TransactionConflictException, is tried again, and answered
// 503 with Retry-After when the transaction outlasts the tries; then the
// same write goes through. (A profile written as it is stored changes no
// field, publishes nothing, and so is one UpdateItem.)
func TestWriteMeetingATransaction(t *testing.T) {
	p, _, admin, grace := faultyShop(t)
	p.Set(ddbfault.Rule{Fault: ddbfault.Conflict, Delay: time.Second})
	deposit := make(chan servicetest.Response, 1)
	go func() { deposit <- admin.Do(t, "POST", "/users/2/deposit", `{"amount": 1.00}`) }()
	for p.Held() == 0 { // its items in flight, for a second
		time.Sleep(time.Millisecond)
	}
	const same = `{"bio": "", "location": "", "website": "", "newsletter": false}` // the demo's
	wantUnavailable(t, grace.Do(t, "PUT", "/users/2/profile", same))
	if n := p.Injected()[ddbfault.Conflict]; n != dynamo.MaxAttempts {
		t.Errorf("%d conflicts, want one per attempt (%d)", n, dynamo.MaxAttempts)
	}
	if r := <-deposit; r.StatusCode != http.StatusOK {
		t.Errorf("the deposit = %d %s", r.StatusCode, r.Body)
	}
	grace.Expect(t, "PUT", "/users/2/profile", same, http.StatusOK)
	var u struct{ Balance json.Number }
	if err := get(t, grace, "/users/2", &u); err != nil || u.Balance != "51.00" {
		t.Errorf("balance %s (%v), want 51.00", u.Balance, err)
	}
}
