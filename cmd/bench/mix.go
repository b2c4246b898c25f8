package main

import (
	"fmt"
	"regexp"

	"github.com/quireapi/quire/internal/routes"
)

// mixEntry is one request case of the traffic mix and its weight: requests
// out of every 10,000.
type mixEntry struct {
	route, name string // a case of cases()
	weight      float64
}

// trafficMix is what a bookshop with 1,000,000 users plausibly sees at its
// peak, per 10,000 requests. About a tenth of the users (100,000, see
// activeUsers) are active then, each sending a request every 10 s or so.
//   - Browsing dominates: most visits open the landing page (public, so
//     also every visitor not logged in), then look at book pages and
//     pages of the catalog; authors less.
//   - Apps fetch the configuration document when they start and
//     revalidate it with If-None-Match afterwards: mostly 304s.
//   - Carts: looking at the cart is about twice as common as adding to it;
//     removing is rarer. One request in a hundred pays (a few percent of
//     visits end in a purchase); buying a single book at once is rarer.
//   - Accounts: people look at their account (the balance) after buying,
//     their orders now and then; profile edits and deposits (by an admin
//     or a payment processor acting as one) are rare.
//   - Tokens: each active client trades its refresh token once a token
//     lifetime (15 minutes): 100,000 / 900 s is about 110 a second, 1.1%
//     at 10,000 requests/s. Logins are rarer: refresh tokens keep sessions
//     alive; sign-ups rarer still. (Both pass the 10 a second that
//     infra/protection.go lets through by default: a deployment at this
//     scale raises those limits with the stage's.)
//   - Admin writes (catalog, configuration) and account closings are a
//     handful an hour; health checks come from a few load balancers.
var trafficMix = []mixEntry{
	{"GET /landing", "", 2000},
	{"GET /products", "a page of 20 (the default)", 1500},
	{"GET /products/{id}", "v1", 2000},
	{"GET /authors", "one page of 2", 100},
	{"GET /authors/{id}", "", 300},
	{"GET /authors/{id}/books", "", 300},
	{"GET /config", "If-None-Match: its ETag", 400},
	{"GET /config", "the demo's, 568 B", 100},
	{"GET /cart", "", 800},
	{"POST /cart", "", 400},
	{"DELETE /cart/items/{product_id}", "", 100},
	{"POST /pay", "a cart of 2 books, first", 100},
	{"POST /products/{id}/buy", "", 50},
	{"GET /orders", "", 150},
	{"GET /orders/{id}", "", 100},
	{"GET /users/{id}", "", 600},
	{"GET /users", "customer: their own", 50},
	{"GET /users/{id}/profile", "", 100},
	{"PUT /users/{id}/profile", "", 10},
	{"POST /users/{id}/deposit", "", 20},
	{"PUT /users/{id}", "same email", 5},
	{"POST /users", "", 2},
	{"POST /users/{id}/close", "", 1},
	{"DELETE /users/{id}", "", 1},
	{"POST /tokens", "the demo session's refresh token", 110},
	{"POST /login", "success", 10},
	{"DELETE /session", "the demo session", 10},
	{"GET /.well-known/jwks.json", "", 5},
	{"GET /users", "admin: one page of 2", 2},
	{"GET /admin/users", "one page of 2", 2},
	{"PUT /admin/products/{id}", "archive (v2)", 1},
	{"POST /admin/products", "", 0.5},
	{"POST /admin/authors", "", 0.1},
	{"PUT /admin/config", "replace it", 0.1},
	{"GET /health", "", 2},
	{"GET /status", "", 1},
	{"GET /openapi.json", "", 1},
	{"GET /", "", 0.1},
	{"GET /docs", "", 0.5},
	{"GET /docs/{file}", "Swagger UI's script", 1},
	{"GET /favicon.ico", "", 0.5},
}

// spread says over how many values of a partition key class the load
// spreads, and so which share of it the hottest value takes.
type spread int

const (
	// shared: one value that every such request touches.
	shared spread = iota
	// perUser: one user's own items. Each active user sends about the
	// same share of requests, and none more than the per-caller limits
	// let through, so the hottest value takes 1/activeUsers.
	perUser
	// perItem: one author or book. Popularity is skewed: the bestseller
	// takes hotItemShare, about what a Zipf law (s = 1) gives the first of
	// 10,000 titles (1/H(10,000) = 10%).
	perItem
	// listed: an item that a one-value index partition lists (the landing
	// page's books, the first page of products), read after the Query in
	// the same request: every such request reads the same items, so each
	// value takes the whole rate.
	listed
	// unique: a key written once, by one request (an event in the
	// outbox): no value takes a load.
	unique
)

// The model's assumptions.
const (
	activeUsers  = 100_000
	hotItemShare = 0.10
)

func (s spread) String() string {
	return [...]string{"one value", "per user", "per book or author", "listed", "one per write"}[s]
}

// share is the part of a class's load its hottest value takes.
func (s spread) share() float64 {
	switch s {
	case perUser:
		return 1.0 / activeUsers
	case perItem:
		return hotItemShare
	case unique:
		return 0
	}
	return 1
}

// keyClass names partition key values that share a role: user#<id> for
// every user's item, or one value (config, kind=product) that is its own
// class.
type keyClass struct {
	table, index, name string
	spread             spread
}

// classRules classify partition key values by table, index and value; a
// value no rule matches is a class of its own, shared.
var classRules = []struct {
	table, index string
	value        *regexp.Regexp
	name         string // the class, with $1 for the value's first group
	spread       spread
}{
	{routes.TableUsers, "", regexp.MustCompile(`^user#\d+$`), "user#<id>", perUser},
	{routes.TableUsers, "", regexp.MustCompile(`^email#.+$`), "email#<email>", perUser},
	{routes.TableSessions, "", regexp.MustCompile(`^user#\d+$`), "user#<id>", perUser},
	{routes.TableSessions, "", regexp.MustCompile(`^login#.+$`), "login#<email hash>", perUser},
	{routes.TableCarts, "", regexp.MustCompile(`^cart#\d+$`), "cart#<user id>", perUser},
	{routes.TableOrders, "", regexp.MustCompile(`^user#\d+$`), "user#<id>", perUser},
	{routes.TableOrders, "by_id", regexp.MustCompile(`^.+$`), "id=<order id>", perUser},
	// A key's scope starts with its caller's id.
	{routes.TableIdempotency, "", regexp.MustCompile(`^.+$`), "<user id> <method> <path> <key>", perUser},
	{routes.TableCatalog, "", regexp.MustCompile(`^author#\d+$`), "author#<id>", perItem},
	{routes.TableCatalog, "", regexp.MustCompile(`^product#\d+$`), "product#<id>", perItem},
	{routes.TableCatalog, "by_author", regexp.MustCompile(`^.+$`), "author_id=<id>", perItem},
	{routes.TableEvents, "", regexp.MustCompile(`^event#.+$`), "event#<event id>", unique},
	// Every reader of the document reads the same chunks.
	{routes.TableConfig, "", regexp.MustCompile(`^config#[^#]+#(\d+)$`), "config#<hash>#$1", shared},
}

// classify returns the class of the partition a touch touched: listed
// when it is a read of what a Query of a one-value index partition lists.
func classify(t touch, listing bool) keyClass {
	k := classOf(t)
	if listing && t.index == "" && t.read > 0 && t.write == 0 {
		k.spread = listed
	}
	return k
}

func classOf(t touch) keyClass {
	for _, r := range classRules {
		if r.table == t.table && r.index == t.index && r.value.MatchString(t.value) {
			return keyClass{t.table, t.index, r.value.ReplaceAllString(t.value, r.name), r.spread}
		}
	}
	name := t.value
	if t.index != "" {
		name = t.attr + "=" + t.value
	}
	return keyClass{t.table, t.index, name, shared}
}

// mixCase returns the row of rows that a mix entry names.
func mixCase(rows []requestRow, e mixEntry) (requestRow, error) {
	for _, r := range rows {
		if r.route == e.route && r.name == e.name {
			return r, nil
		}
	}
	return requestRow{}, fmt.Errorf("traffic mix: no case %q of %s", e.name, e.route)
}
