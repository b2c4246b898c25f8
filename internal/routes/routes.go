// Package routes is Quire's route table: the one list of every HTTP route, the
// function (resource group) that serves it and who may call it. The CDK app
// builds API Gateway resources, methods and IAM grants from it, each function
// builds its router from it, and the local gateway dispatches by it.
package routes

import (
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Access says who may call a route.
type Access string

// The access levels. Public routes need no token; User routes need a valid
// bearer token; Admin routes need a token with the admin role.
const (
	Public Access = "public"
	User   Access = "user"
	Admin  Access = "admin"
)

// Route is one method on one path. Path uses API Gateway's template syntax,
// which is also net/http's pattern syntax: /users/{id}.
type Route struct {
	Method string
	Path   string
	Group  string // the function that serves the route
	Access Access
	// Versioned routes serve a resource in every API version: under
	// /api/v1 and /api/v2 (Version says which), and without a prefix
	// (Version 0), where the Accept header chooses the version. A route
	// that is not versioned and has a Version belongs to that version
	// alone: its OpenAPI document.
	Versioned bool
	Version   int
	// Key says whether the route takes an idempotency key.
	Idempotency KeyUse
	// KeyScope, on a public route that takes keys, names the body's
	// member (a string) whose value, in lower case, scopes a key sent with
	// no token (sign-up's email): strangers share no scope of keys, where
	// a caller's keys are scoped to the caller.
	KeyScope string
	// Body says the route reads a request body. Every other route
	// refuses a non-empty one, which it would otherwise ignore.
	Body bool
	// Events are the types of the events a write route may publish, in
	// the transaction of its change (see quire.EventTypes); a write route
	// that publishes none says why in NoEvents. TestWritesSayTheirEvents
	// holds the code, docs/events.md and the documents to them.
	Events   []string
	NoEvents string
}

// KeyUse says whether a route takes an Idempotency-Key header.
type KeyUse string

// The uses of an idempotency key: none (the header is ignored), optional,
// required.
const (
	KeyNone     KeyUse = ""
	KeyOptional KeyUse = "optional"
	KeyRequired KeyUse = "required"
)

// Versions are the API's versions, oldest first. A request that names none
// gets the oldest.
var Versions = []int{1, 2}

// DocumentPath is the path of the OpenAPI document, of the newest version
// without a prefix and of each version under its own.
const DocumentPath = "/openapi.json"

// Retirement is how a version is retired, announced before it happens:
// from the day it is declared, the version's answers say it is deprecated
// from Deprecated (a Deprecation header, RFC 9745, with a Link to
// Changelog) and gone from Sunset (a Sunset header, RFC 8594), and its
// document marks its operations deprecated; from Sunset on, its routes
// answer 410 Gone, naming the version that succeeds it, and a request that
// names no version gets the oldest one not gone.
type Retirement struct {
	Deprecated, Sunset time.Time
	// Changelog is the URL of what replaces the version, and why: the
	// version's section of contracts/CHANGELOG.md, as the fork publishes it.
	Changelog string
}

// Retirements are the versions being retired, by version; none is. To
// retire version 1, give it a Retirement (a sunset months after its
// deprecation, and after its successor is released), run make contract,
// and say so in contracts/CHANGELOG.md.
var Retirements = map[int]Retirement{}

// Check reports what is wrong with the retirement r of version v: a
// version the API does not serve, the newest (which no version succeeds),
// a sunset not after the deprecation, or a changelog that is not an https
// URL (the Link of every deprecated answer names it).
func (r Retirement) Check(v int) error {
	u, err := url.Parse(r.Changelog)
	switch {
	case !slices.Contains(Versions, v):
		return fmt.Errorf("version %d: the API serves no such version", v)
	case v == slices.Max(Versions):
		return fmt.Errorf("version %d: the newest version has no successor to retire it for", v)
	case !r.Sunset.After(r.Deprecated):
		return fmt.Errorf("version %d: its sunset, %s, is not after its deprecation, %s", v, r.Sunset, r.Deprecated)
	case err != nil || u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("version %d: its changelog %q is not an https URL", v, r.Changelog)
	}
	return nil
}

// Gone reports whether version v is past its sunset at now.
func Gone(v int, now time.Time) bool {
	r, ok := Retirements[v]
	return ok && !now.Before(r.Sunset)
}

// Successor is the version that replaces v: the oldest newer one not gone
// at now, or 0 when there is none.
func Successor(v int, now time.Time) int {
	for _, n := range Versions {
		if n > v && !Gone(n, now) {
			return n
		}
	}
	return 0
}

// VersionPrefix returns the path prefix of version v: "/api/v1".
func VersionPrefix(v int) string { return "/api/v" + strconv.Itoa(v) }

// Key is the route as "METHOD /path", the form net/http patterns use.
func (r Route) Key() string { return r.Method + " " + r.Path }

// Resource returns the route without its version prefix: the route a
// handler serves in every version.
func (r Route) Resource() Route {
	if r.Version != 0 {
		r.Path = strings.TrimPrefix(r.Path, VersionPrefix(r.Version))
		r.Version = 0
	}
	return r
}

// The resource groups. Each is one Lambda function.
const (
	GroupAuth    = "auth"
	GroupCatalog = "catalog"
	GroupCarts   = "carts"
	GroupOrders  = "orders"
	GroupUsers   = "users"
	GroupHealth  = "health"
	GroupConfig  = "config"
)

// Table names, as keys of the table definitions in package dynamo.
const (
	TableUsers   = "users"
	TableCatalog = "catalog"
	TableCarts   = "carts"
	TableOrders  = "orders"
	// TableIdempotency keeps the first answer to each idempotency key.
	TableIdempotency = "idempotency"
	// TableConfig keeps the configuration document.
	TableConfig = "config"
	// TableSessions keeps login sessions (their refresh tokens' hashes).
	TableSessions = "sessions"
	// TableEvents is the outbox: each event, written in the transaction
	// of its change, and published from the table's stream.
	TableEvents = "events"
)

// Grant is a set of DynamoDB actions on one table, and the one action on
// its indexes.
type Grant struct {
	Table   string
	Actions []string // on the table itself
	// QueryIndexes lets the function Query the table's indexes: QueryAction
	// is the one action that acts on an index.
	QueryIndexes bool
	// Unsent says why no sample event sends the grant's actions, when
	// none does: the path that needs them, which the samples cannot
	// reach. The replay of the samples (package events) fails on any
	// other action that it did not see sent.
	Unsent string
}

// AuthorizerMemoryMB is the memory of the authorizer function, which
// verifies a token's signature and nothing more.
const AuthorizerMemoryMB = 256

// Group is one resource group: one Lambda function and what it may touch.
type Group struct {
	Name        string
	Description string
	// Grants lists every DynamoDB action the function performs, and nothing
	// more: the CDK app turns each into an IAM statement.
	Grants []Grant
	// MemoryMB is the function's memory, which also sets its share of CPU:
	// password hashing needs more than serving JSON does.
	MemoryMB int
}

// All returns every route, in a stable order: the routes outside
// versioning, then each resource route without a version prefix, then under
// each version's prefix.
func All() []Route { return all }

// plain are the routes outside versioning.
var plain = []Route{
	{Method: "GET", Path: "/health", Group: GroupHealth, Access: Public},
	{Method: "GET", Path: "/status", Group: GroupHealth, Access: Public},
	// The newest version's OpenAPI document; each version's is under
	// its prefix (see expand).
	{Method: "GET", Path: "/openapi.json", Group: GroupHealth, Access: Public},
	{Method: "GET", Path: "/", Group: GroupHealth, Access: Public},
	{Method: "GET", Path: "/docs", Group: GroupHealth, Access: Public},
	{Method: "GET", Path: "/docs/{file}", Group: GroupHealth, Access: Public},
	{Method: "GET", Path: "/favicon.ico", Group: GroupHealth, Access: Public},

	{Method: "POST", Path: "/login", Group: GroupAuth, Access: Public, Body: true, NoEvents: "a session is the client's own, not a change of the shop"},
	{Method: "POST", Path: "/tokens", Group: GroupAuth, Access: Public, Body: true, NoEvents: "a session is the client's own, not a change of the shop"},
	{Method: "DELETE", Path: "/session", Group: GroupAuth, Access: User, NoEvents: "a session is the client's own, not a change of the shop"},
	{Method: "GET", Path: "/.well-known/jwks.json", Group: GroupAuth, Access: Public},
}

// resources are the routes of resources, each served in every version.
var resources = []Route{
	{Method: "GET", Path: "/landing", Group: GroupCatalog, Access: Public},
	{Method: "GET", Path: "/authors", Group: GroupCatalog, Access: User},
	{Method: "GET", Path: "/authors/{id}", Group: GroupCatalog, Access: User},
	{Method: "GET", Path: "/authors/{id}/books", Group: GroupCatalog, Access: User},
	{Method: "GET", Path: "/products", Group: GroupCatalog, Access: User},
	{Method: "GET", Path: "/products/{id}", Group: GroupCatalog, Access: User},
	{Method: "POST", Path: "/admin/authors", Group: GroupCatalog, Access: Admin, Idempotency: KeyOptional, Body: true, Events: []string{"author.created"}},
	{Method: "POST", Path: "/admin/products", Group: GroupCatalog, Access: Admin, Idempotency: KeyOptional, Body: true, Events: []string{"product.created"}},
	{Method: "PUT", Path: "/admin/products/{id}", Group: GroupCatalog, Access: Admin, Body: true, Events: []string{"product.changed", "product.archived"}},

	{Method: "GET", Path: "/cart", Group: GroupCarts, Access: User},
	{Method: "POST", Path: "/cart", Group: GroupCarts, Access: User, Idempotency: KeyOptional, Body: true, NoEvents: "a cart is its owner's until it is paid, which order.placed tells"},
	{Method: "DELETE", Path: "/cart/items/{product_id}", Group: GroupCarts, Access: User, NoEvents: "a cart is its owner's until it is paid, which order.placed tells"},

	{Method: "POST", Path: "/products/{id}/buy", Group: GroupOrders, Access: User, Idempotency: KeyOptional, Body: true, Events: []string{"order.placed"}},
	{Method: "POST", Path: "/pay", Group: GroupOrders, Access: User, Idempotency: KeyRequired, Events: []string{"order.placed"}},
	{Method: "GET", Path: "/orders", Group: GroupOrders, Access: User},
	{Method: "GET", Path: "/orders/{id}", Group: GroupOrders, Access: User},

	{Method: "GET", Path: "/users", Group: GroupUsers, Access: User},
	{Method: "POST", Path: "/users", Group: GroupUsers, Access: Public, Idempotency: KeyOptional, KeyScope: "email", Body: true, Events: []string{"user.created"}},
	{Method: "GET", Path: "/users/{id}", Group: GroupUsers, Access: User},
	{Method: "PUT", Path: "/users/{id}", Group: GroupUsers, Access: User, Body: true, Events: []string{"user.changed", "user.closed", "user.reopened"}},
	{Method: "DELETE", Path: "/users/{id}", Group: GroupUsers, Access: User, Body: true, Events: []string{"user.deleted"}},
	{Method: "GET", Path: "/users/{id}/profile", Group: GroupUsers, Access: User},
	{Method: "PUT", Path: "/users/{id}/profile", Group: GroupUsers, Access: User, Body: true, Events: []string{"user.changed"}},
	{Method: "POST", Path: "/users/{id}/deposit", Group: GroupUsers, Access: Admin, Idempotency: KeyOptional, Body: true, Events: []string{"user.funded"}},
	{Method: "POST", Path: "/users/{id}/close", Group: GroupUsers, Access: User, Idempotency: KeyOptional, Events: []string{"user.closed"}},
	{Method: "GET", Path: "/admin/users", Group: GroupUsers, Access: Admin},

	{Method: "GET", Path: "/config", Group: GroupConfig, Access: User},
	{Method: "PUT", Path: "/admin/config", Group: GroupConfig, Access: Admin, Body: true, Events: []string{"config.changed"}},
}

var all = expand(plain, resources)

// Grow adds versions and resource routes to the table, until restore puts
// it back: the table of a fork with another version and more routes, for
// the tests that measure what those cost the stack. Nothing serves it.
func Grow(versions []int, more []Route) (restore func()) {
	wasVersions, wasAll := Versions, all
	Versions = append(slices.Clone(Versions), versions...)
	all = expand(plain, append(slices.Clone(resources), more...))
	index = sync.OnceValue(indexAll)
	return func() {
		Versions, all = wasVersions, wasAll
		index = sync.OnceValue(indexAll)
	}
}

// expand returns the plain routes, each version's OpenAPI document, and
// each resource route without a version prefix and under each version's.
func expand(plain, resources []Route) []Route {
	out := make([]Route, 0, len(plain)+len(Versions)+len(resources)*(1+len(Versions)))
	out = append(out, plain...)
	for _, v := range Versions {
		out = append(out, Route{Method: "GET", Path: VersionPrefix(v) + DocumentPath, Group: GroupHealth, Access: Public, Version: v})
	}
	for _, v := range append([]int{0}, Versions...) {
		for _, r := range resources {
			r.Versioned, r.Version = true, v
			if v != 0 {
				r.Path = VersionPrefix(v) + r.Path
			}
			out = append(out, r)
		}
	}
	return out
}

// Groups returns every resource group, in a stable order, without the
// actions Revoke took.
func Groups() []Group {
	gs := groups()
	for _, r := range revoked {
		for i, g := range gs {
			for j, gr := range g.Grants {
				if g.Name == r.group && gr.Table == r.Table {
					gs[i].Grants[j].Actions = slices.DeleteFunc(slices.Clone(gr.Actions), func(a string) bool { return slices.Contains(r.Actions, a) })
				}
			}
		}
	}
	return gs
}

// revoked are the actions Revoke took from groups' grants.
var revoked []struct {
	group string
	Grant
}

// Revoke takes actions on table from the grants of the group named group
// until restore gives them back: a group missing a grant, for the tests
// that show what its function's calls then meet. Not for parallel tests.
func Revoke(group, table string, actions ...string) (restore func()) {
	was := revoked
	revoked = append(slices.Clip(revoked), struct {
		group string
		Grant
	}{group, Grant{Table: table, Actions: actions}})
	return func() { revoked = was }
}

func groups() []Group {
	return []Group{
		{
			Name:        GroupHealth,
			Description: "Health check for load balancers (GET /health and /status), the OpenAPI document and its docs page",
			Grants:      []Grant{{Table: TableUsers, Actions: []string{"dynamodb:GetItem"}}},
			MemoryMB:    256,
		},
		{
			Name:        GroupAuth,
			Description: "Login, token refresh and logout, and the public keys of access tokens",
			Grants: []Grant{
				{Table: TableUsers, Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem"}},
				{Table: TableSessions, Actions: []string{"dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}},
			},
			MemoryMB: 1024,
		},
		{
			Name:        GroupCatalog,
			Description: "The catalog: the landing page, authors and products, and their admin",
			Grants: []Grant{
				{Table: TableCatalog, Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}, QueryIndexes: true},
				callerGrant,
				idempotencyGrant,
				eventsGrant,
			},
			MemoryMB: 256,
		},
		{
			Name:        GroupCarts,
			Description: "Carts: the caller's cart, kept in DynamoDB",
			Grants: []Grant{
				{Table: TableCarts, Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}},
				{Table: TableCatalog, Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem"}},
				callerGrant,
				idempotencyGrant,
			},
			MemoryMB: 256,
		},
		{
			Name:        GroupOrders,
			Description: "Orders: buying a book or the whole cart from the prepaid balance, and the orders made",
			Grants: []Grant{
				{Table: TableOrders, Actions: []string{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:Query"}, QueryIndexes: true},
				{Table: TableUsers, Actions: []string{"dynamodb:UpdateItem", "dynamodb:GetItem"}},
				{Table: TableCarts, Actions: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}},
				{Table: TableCatalog, Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem"}},
				idempotencyGrant,
				eventsGrant,
			},
			MemoryMB: 256,
		},
		{
			Name:        GroupUsers,
			Description: "Users: sign-up, accounts, profiles, deposits and closing",
			Grants: []Grant{
				{Table: TableUsers, Actions: []string{
					"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
					"dynamodb:DeleteItem",
				}, QueryIndexes: true},
				// Failed logins (a wrong current password), and what a
				// deleted user leaves: sessions, failed logins, the cart.
				{Table: TableSessions, Actions: []string{"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"}},
				{Table: TableSessions, Actions: []string{"dynamodb:PutItem", "dynamodb:BatchWriteItem"},
					Unsent: "a wrong current password once the window of an email's failed logins has ended starts another (PutItem), " +
						"and a deletion of a user with more sessions than its transaction ends deletes the rest in batches (BatchWriteItem)"},
				{Table: TableCarts, Actions: []string{"dynamodb:DeleteItem"}},
				idempotencyGrant,
				eventsGrant,
			},
			MemoryMB: 1024,
		},
		{
			Name:        GroupConfig,
			Description: "The configuration document: GET /config, PUT /admin/config",
			Grants: []Grant{
				{Table: TableConfig, Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"}},
				callerGrant,
				eventsGrant,
			},
			// Compressing a 2 MiB document on PUT wants more CPU than
			// serving JSON does.
			MemoryMB: 512,
		},
	}
}

// GroupNamed returns the resource group named name, if there is one.
func GroupNamed(name string) (Group, bool) {
	for _, g := range Groups() {
		if g.Name == name {
			return g, true
		}
	}
	return Group{}, false
}

// QueryAction is the one action a grant gives on its table's indexes
// (Grant.QueryIndexes): no other acts on an index.
const QueryAction = "dynamodb:Query"

// Allows reports whether g's role lets its function take action on the
// table named table, or on one of its indexes when index. The stack's IAM
// statements for the function (infra) say the same: each grant's actions
// on its table, and QueryAction alone on the table's indexes when the
// grant has QueryIndexes.
func (g Group) Allows(action, table string, index bool) bool {
	for _, gr := range g.Grants {
		if gr.Table != table {
			continue
		}
		if index && action == QueryAction && gr.QueryIndexes || !index && slices.Contains(gr.Actions, action) {
			return true
		}
	}
	return false
}

// callerGrant lets a group's router read the account of each caller of a
// protected route (see access.Decide).
var callerGrant = Grant{Table: TableUsers, Actions: []string{"dynamodb:GetItem"}}

// idempotencyGrant lets a group that takes idempotency keys read their
// records and write them in its transactions.
var idempotencyGrant = Grant{Table: TableIdempotency, Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}}

// eventsGrant lets a group whose changes publish events write them into
// the outbox in the changes' transactions: it may add events, never read
// or change them.
var eventsGrant = Grant{Table: TableEvents, Actions: []string{"dynamodb:PutItem"}}

// ForGroup returns the routes a group serves.
func ForGroup(group string) []Route {
	var out []Route
	for _, r := range All() {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// Paths returns every distinct path in the table, in table order. The
// slice is shared: callers must not change it.
func Paths() []string { return index().paths }

// index is the table's distinct paths, in table order, and the routes on
// each, found when first needed: every function builds its router from it at
// init, so it takes one map and two passes, not a search of the table per
// path.
var index = sync.OnceValue(indexAll)

// pathIndex is the index of the table's paths.
type pathIndex struct {
	paths []string
	segs  [][]string     // each path's segments, for Match
	first map[string]int // the index in All of each path's first route
	next  []int          // the index of the next route on the same path, or -1
}

func indexAll() (x pathIndex) {
	x.first, x.next = make(map[string]int, len(all)), make([]int, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		x.next[i] = -1
		if j, ok := x.first[all[i].Path]; ok {
			x.next[i] = j
		}
		x.first[all[i].Path] = i
	}
	for i, r := range all {
		if x.first[r.Path] == i {
			x.paths, x.segs = append(x.paths, r.Path), append(x.segs, split(r.Path))
		}
	}
	return x
}

// onPath returns the routes on path, in table order.
func onPath(path string) iter.Seq[Route] {
	return func(yield func(Route) bool) {
		x := index()
		i, ok := x.first[path]
		for ok && i >= 0 && yield(all[i]) {
			i = x.next[i]
		}
	}
}

// VersionParam is the path parameter that names the version in API
// Gateway's one resource tree for every version's routes,
// /api/{version}/users/{id}: "v1", "v2". Each route of the tree serves
// every version, so that a version costs the stack no resource and no
// method, and a method's throttle holds whatever version a client names;
// the function checks the version, and one that does not exist is 404.
const VersionParam = "version"

// versionTree is the prefix of the tree's paths.
const versionTree = "/api/{" + VersionParam + "}"

// Gateway returns the resource API Gateway has for path, a path of the
// table, and the value of VersionParam it matches for it: a version's
// /api/v1/users/{id} is /api/{version}/users/{id} with "v1"; any other path
// is itself, with "".
func Gateway(path string) (resource, version string) {
	for _, v := range Versions {
		if rest, ok := strings.CutPrefix(path, VersionPrefix(v)); ok && (rest == "" || rest[0] == '/') {
			return versionTree + rest, "v" + strconv.Itoa(v)
		}
	}
	return path, ""
}

// GatewayPaths returns the paths of API Gateway's resources: each path of
// the table, every version's as one (see Gateway), in table order.
func GatewayPaths() []string {
	var out []string
	for _, p := range Paths() {
		if g, _ := Gateway(p); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// tablePath returns the path of the table that resource, a path of API
// Gateway's (or of the table), names for version, a value of VersionParam
// ("v1"): /api/{version}/users/{id} and "v1" name /api/v1/users/{id}. Any
// version does when the table's paths are the same in each (Owner, Find).
// It is false for a version the API does not have.
func tablePath(resource, version string) (string, bool) {
	rest, ok := strings.CutPrefix(resource, versionTree)
	if !ok {
		return resource, true
	}
	if version == "" {
		version = "v" + strconv.Itoa(Versions[0])
	}
	for _, v := range Versions {
		if version == "v"+strconv.Itoa(v) {
			return VersionPrefix(v) + rest, true
		}
	}
	return "", false
}

// Find returns the route of method on path (a template of the table, or
// of API Gateway's: see Gateway), if the table has it.
func Find(method, path string) (Route, bool) {
	path, _ = tablePath(path, "")
	for r := range onPath(path) {
		if r.Method == method {
			return r, true
		}
	}
	return Route{}, false
}

// Allow returns the methods path answers, sorted: the value of an Allow
// header. Besides the table's, HEAD wherever GET is (RFC 9110 section
// 9.3.2: the GET's answer without its body), and OPTIONS on every path
// (its Allow, and a browser's CORS preflight).
func Allow(path string) []string {
	var out []string
	for r := range onPath(path) {
		out = append(out, r.Method)
		if r.Method == http.MethodGet {
			out = append(out, http.MethodHead)
		}
	}
	if out != nil {
		out = append(out, http.MethodOptions)
	}
	slices.Sort(out)
	return out
}

// Owner returns the group that answers requests on path (a template of the
// table, or of API Gateway's) with a method the table does not define (the
// 405 answer): the group of the path's first route.
func Owner(path string) string {
	path, _ = tablePath(path, "")
	for r := range onPath(path) {
		return r.Group
	}
	return ""
}

// PathAccess returns the access a path needs for a method the table does
// not define on it (which its owner answers with 405): the least any of its
// routes needs, so that a path with a public route stays public.
func PathAccess(path string) Access {
	path, _ = tablePath(path, "")
	level := map[Access]int{Public: 0, User: 1, Admin: 2}
	var out Access
	for r := range onPath(path) {
		if out == "" || level[r.Access] < level[out] {
			out = r.Access
		}
	}
	return out
}

// Match finds the path template that matches a concrete request path and the
// values of its parameters. ok is false when no template matches. Literal
// segments take precedence over parameters, as in API Gateway.
func Match(path string) (template string, params map[string]string, ok bool) {
	if !strings.HasPrefix(path, "/") {
		return "", nil, false
	}
	segs := split(path)
	best, bestScore := 0, -1
	x := index()
	for n := range x.paths {
		if score, ok := matchScore(x.segs[n], segs); ok && score > bestScore {
			best, bestScore = n, score
		}
	}
	if bestScore < 0 {
		return "", nil, false
	}
	params = map[string]string{}
	for i, t := range x.segs[best] {
		if isParam(t) {
			params[t[1:len(t)-1]] = segs[i]
		}
	}
	return x.paths[best], params, true
}

// Resolve returns the path of template, a path of the table or of API
// Gateway's (with its version in params[VersionParam]), with each of its
// parameters filled from params and escaped (url.PathEscape): the path
// Match would match to template and params. It is false when the table has
// no such path, params lacks one of its parameters, or names a version the
// API does not have.
func Resolve(template string, params map[string]string) (path string, ok bool) {
	if strings.HasPrefix(template, versionTree) && params[VersionParam] == "" {
		return "", false
	}
	if template, ok = tablePath(template, params[VersionParam]); !ok {
		return "", false
	}
	if _, ok := index().first[template]; !ok {
		return "", false
	}
	segs := split(template)
	for i, s := range segs {
		if isParam(s) {
			v := params[s[1:len(s)-1]]
			if v == "" {
				return "", false
			}
			segs[i] = url.PathEscape(v)
		}
	}
	return "/" + strings.Join(segs, "/"), true
}

// matchScore reports whether a template's segments tsegs match a path's
// segments segs, and how well: each literal segment scores, earlier ones
// more.
func matchScore(tsegs, segs []string) (score int, ok bool) {
	if len(tsegs) != len(segs) {
		return 0, false
	}
	for i, t := range tsegs {
		switch {
		case isParam(t):
			if segs[i] == "" {
				return 0, false
			}
		case t == segs[i]:
			score += 1 << (len(tsegs) - i) // earlier literals weigh more
		default:
			return 0, false
		}
	}
	return score, true
}

func split(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "/"), "/")
}

func isParam(seg string) bool {
	return len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}'
}
