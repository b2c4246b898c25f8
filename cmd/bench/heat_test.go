package main

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		touch   touch
		listing bool
		want    keyClass
	}{
		{touch{table: "users", attr: "pk", value: "user#12", read: 1}, false, keyClass{"users", "", "user#<id>", perUser}},
		{touch{table: "users", attr: "pk", value: "email#ada@quire.example", write: 2}, false, keyClass{"users", "", "email#<email>", perUser}},
		{touch{table: "users", attr: "pk", value: "health#ping", read: 0.5}, false, keyClass{"users", "", "health#ping", shared}},
		{touch{table: "users", index: "role", attr: "role_pk", value: "customer", write: 1}, false, keyClass{"users", "role", "role_pk=customer", shared}},
		{touch{table: "config", attr: "pk", value: "config", read: 1}, false, keyClass{"config", "", "config", shared}},
		{touch{table: "config", attr: "pk", value: "config#9f86d08188#2", read: 1}, false, keyClass{"config", "", "config#<hash>#2", shared}},
		{touch{table: "catalog", attr: "pk", value: "product#7", read: 1}, false, keyClass{"catalog", "", "product#<id>", perItem}},
		{touch{table: "catalog", attr: "pk", value: "product#7", read: 1}, true, keyClass{"catalog", "", "product#<id>", listed}},
		{touch{table: "catalog", attr: "pk", value: "product#7", write: 1}, true, keyClass{"catalog", "", "product#<id>", perItem}},
		{touch{table: "catalog", index: "kind", attr: "kind", value: "product", read: 0.5}, false, keyClass{"catalog", "kind", "kind=product", shared}},
		{touch{table: "catalog", index: "by_author", attr: "author_id", value: "3", read: 0.5}, false, keyClass{"catalog", "by_author", "author_id=<id>", perItem}},
		{touch{table: "idempotency", attr: "pk", value: "2 POST /pay k1", write: 2}, false, keyClass{"idempotency", "", "<user id> <method> <path> <key>", perUser}},
		{touch{table: "orders", index: "by_id", attr: "id", value: "81", write: 1}, false, keyClass{"orders", "by_id", "id=<order id>", perUser}},
	} {
		if got := classify(c.touch, c.listing); got != c.want {
			t.Errorf("classify(%+v, %t) = %+v, want %+v", c.touch, c.listing, got, c.want)
		}
	}
}

// A landing page that lists two books after a Query of the featured index,
// and a book's page, half the traffic each.
func testMix() []weighted {
	t0 := time.Unix(0, 0)
	landing := []call{
		{op: "Query", span: span{t0, t0.Add(1)}, touches: []touch{{table: "catalog", index: "featured", attr: "featured_pk", value: "book", read: 0.5}}},
		{op: "BatchGetItem", span: span{t0.Add(2), t0.Add(3)}, touches: []touch{
			{table: "catalog", attr: "pk", value: "product#1", read: 1},
			{table: "catalog", attr: "pk", value: "product#2", read: 1},
		}},
	}
	book := []call{{op: "GetItem", touches: []touch{{table: "catalog", attr: "pk", value: "product#9", read: 1}}}}
	return []weighted{
		{mixEntry: mixEntry{route: "GET /landing"}, row: requestRow{steady: landing}, share: 0.5},
		{mixEntry: mixEntry{route: "GET /products/{id}"}, row: requestRow{steady: book}, share: 0.5},
	}
}

func TestHottest(t *testing.T) {
	got := hottest(testMix(), 10_000)
	// product#<id>: a listed book read by every landing page (5,000/s),
	// and the bestseller's share of the book pages (10% of 5,000/s).
	want := []hotKey{
		{"catalog", "featured", "featured_pk=book", []spread{shared}, load{read: 2500}},
		{"catalog", "", "product#<id>", []spread{perItem, listed}, load{read: 5500}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(hotKey{}, load{})); diff != "" {
		t.Errorf("hottest (-want +got):\n%s", diff)
	}
	if got, want := ceiling(load{read: 5500}, 10_000), 10_000*3000/5500.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("ceiling of 5,500 reads at 10,000/s = %v, want %v", got, want)
	}
	if got := ceiling(load{write: 250}, 10_000); got != 40_000 {
		t.Errorf("ceiling of 250 writes at 10,000/s = %v, want 40,000", got)
	}
	if got := ceiling(load{}, 10_000); !math.IsInf(got, 1) {
		t.Errorf("ceiling of no load = %v, want +Inf", got)
	}
	rows := heatRows(testMix())
	for _, r := range rows {
		if r.table == "catalog" && r.index == "" && (r.hot.name != "product#<id>" || math.Round(r.ceiling) != 5455) {
			t.Errorf("catalog's hottest key: %s, limits at %v; want product#<id> at 5,455", r.hot.name, r.ceiling)
		}
		if r.table == "users" && r.hot.name != "" {
			t.Errorf("users: hottest key %s, want none", r.hot.name)
		}
	}
}

// Every mix entry names a case, and every route has an entry.
func TestTrafficMix(t *testing.T) {
	cs, err := cases()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]requestRow, len(cs))
	for i, c := range cs {
		rows[i].requestCase = c
	}
	mix, err := weigh(rows)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, w := range mix {
		total += w.share
	}
	if math.Abs(total-1) > 1e-9 {
		t.Errorf("shares add up to %v, want 1", total)
	}
}

func TestCost(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{160 * time.Microsecond, 1}, {3 * time.Millisecond, 3}, {3*time.Millisecond + time.Microsecond, 4}, {0, 1}} {
		if got := billedMillis(c.d); got != c.want {
			t.Errorf("billedMillis(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	// A million invocations of 1 GB for 1 s: $0.20 and a million GB-seconds.
	if got, want := lambdaCost(1024, 1000), 0.20+13.3334; math.Abs(got-want) > 1e-9 {
		t.Errorf("lambdaCost(1024 MB, 1 s) = %v, want %v", got, want)
	}
	if got := dynamoCost(2, 1); got != 2*0.125+0.625 {
		t.Errorf("dynamoCost(2, 1) = %v", got)
	}
	c := routeCost{gateway: 3.5, authorizer: 0.04, lambda: 0.21, dynamo: 0.5}
	if got := c.httpAPI(); math.Abs(got-(1+0.04+0.21+0.5)) > 1e-9 {
		t.Errorf("on an HTTP API: %v", got)
	}
	b := blend([]routeCost{{weighted: weighted{share: 0.25}, gateway: 3.5, dynamo: 4}, {weighted: weighted{share: 0.75}, gateway: 3.5}})
	if b.gateway != 3.5 || b.dynamo != 1 {
		t.Errorf("blend: gateway %v, DynamoDB %v; want 3.5, 1", b.gateway, b.dynamo)
	}
}

// TestInitRatio: a function's ratio to the floor is taken round by round,
// so that a slow round slows both sides of its ratio.
func TestInitRatio(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	// Medians alone would say 4 / 4 = 1.0: the rounds' ratios are 3, 1, 2.
	if got := initRatio(ms(3, 4, 10), ms(1, 4, 5)); got != 2 {
		t.Errorf("initRatio = %v, want 2", got)
	}
}
