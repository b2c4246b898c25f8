// Package openapi builds Quire's OpenAPI 3.1 documents from the route
// table and the operations below, so that no route goes undocumented: each
// API version has its own (Document), served at /api/v<N>/openapi.json,
// and GET /openapi.json serves the newest version's. The tests check every
// answer against one document of every route of every version (Contract).
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/swaggerui"
)

// schema is a JSON Schema (2020-12, as OpenAPI 3.1 uses).
type schema = map[string]any

func ref(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }

// versioned names a schema per API version: "User" is UserV1 or UserV2.
type versioned func(v int) schema

func perVersion(name string) versioned {
	return func(v int) schema { return ref(fmt.Sprintf("%sV%d", name, v)) }
}

func same(s schema) versioned { return func(int) schema { return s } }

// operation documents one route (without its version prefix). What makes
// a resource's GET, PUT and DELETE conditional (Route.Versioned) is not
// listed here: document adds If-Match and If-None-Match, and responses the
// ETag and the 304.
type operation struct {
	summary   string
	note      string    // more description: what else the route answers
	query     []string  // names of its own parameters (query or header), from the parameters below
	body      versioned // the request body, or nil
	plainBody bool      // the body is application/json in every version, not a version's media type
	// optionalBody: the request may leave the body out.
	optionalBody bool
	status       int              // of success
	result       versioned        // the success body, or nil (204)
	headers      []string         // response headers of success: Location, Link, Cache-Control
	also         map[int][]string // more successes, without a body, and their headers
	gzip         bool             // the body is gzip-compressed when Accept-Encoding takes gzip
	// revalidated: a GET, not a resource's, whose success carries an ETag
	// of its own and that takes If-None-Match (304) and If-Match (412).
	revalidated bool
	refusals    []string // the codes of the operation's 409s that no retry fixes (a write's 409 may also be ECONFLICT)
	problems    []string // the codes of its 4xx problems that its route does not imply (see failures)
	media       []string // the success body's media types when it is not JSON: text, or an image's bytes
	textLen     int      // the longest text of media, in characters; 0 says nothing
}

// operations documents every route, keyed as in the route table. It is a
// function, so that functions that never serve the document spend nothing
// on it at init.
func operations() map[string]operation {
	return map[string]operation{
		"GET /health":       {summary: "Health check for load balancers", status: 200, result: same(ref("Health")), headers: []string{"Cache-Control"}},
		"GET /status":       {summary: "Health check (the same as /health)", status: 200, result: same(ref("Health")), headers: []string{"Cache-Control"}},
		"GET /openapi.json": {summary: "An OpenAPI document: without a prefix the newest version's, under a version's prefix that version's", status: 200, result: same(schema{"type": "object"}), headers: []string{"Cache-Control"}},
		"GET /":             {summary: "The API's address: a redirect (302) to its docs page", status: http.StatusFound, headers: []string{"Location", "Cache-Control"}},
		"GET /docs":         {summary: "This document as a page to read and try in a browser (Swagger UI)", status: 200, media: []string{"text/html"}, textLen: swaggerui.MaxPageLen, headers: []string{"Cache-Control", "ETag"}, revalidated: true},
		"GET /docs/{file}":  {summary: "A file of the docs page: its script or style sheet", status: 200, media: []string{"text/javascript", "text/css"}, headers: []string{"Cache-Control", "ETag"}, gzip: true, revalidated: true},
		"GET /favicon.ico":  {summary: "The docs page's icon, which browsers ask of every site", status: 200, media: []string{"image/vnd.microsoft.icon"}, headers: []string{"Cache-Control", "ETag"}, revalidated: true},
		"POST /login": {summary: "Trade an email and password for an access token and a refresh token: a new session",
			note: fmt.Sprintf("A wrong email or password is 401. After %d failed logins of an email, counted for %d minutes "+
				"from the first, the email is locked until those minutes are over: 429 with Retry-After (the seconds left), "+
				"whatever the password.", login.MaxLoginFailures, int(login.LoginWindow.Minutes())),
			body: same(ref("Credentials")), status: 200, result: same(ref("Token")), headers: []string{"Cache-Control"}, problems: []string{quire.EUNAUTHORIZED}},
		"POST /tokens": {summary: "Trade a refresh token for a new access token and refresh token; the old one dies, and one used again ends its session",
			note: "A refresh token that is not valid (malformed, unknown, expired, reused or revoked) is 401: log in again.",
			body: same(ref("RefreshRequest")), status: 200, result: same(ref("Token")), headers: []string{"Cache-Control"}, problems: []string{quire.EUNAUTHORIZED}},
		"DELETE /session": {summary: "Log out: end the session of the caller's access token (which stays valid until it expires)",
			note: "404 when the session has ended already, or the token belongs to none.", status: 204, problems: []string{quire.ENOTFOUND}},
		"GET /.well-known/jwks.json": {summary: "The public keys that verify access tokens", status: 200, result: same(ref("JWKS")), headers: []string{"Cache-Control"}},

		"GET /landing":             {summary: "The landing page: featured books", status: 200, result: perVersion("Landing")},
		"GET /authors":             {summary: "List authors", query: []string{"limit", "cursor"}, status: 200, result: same(page(ref("Author"))), headers: []string{"Link"}},
		"GET /authors/{id}":        {summary: "Get an author", status: 200, result: same(ref("Author"))},
		"GET /authors/{id}/books":  {summary: "List an author's books", query: []string{"limit", "cursor"}, status: 200, result: pageOfVersion("Product"), headers: []string{"Link"}},
		"GET /products":            {summary: "List products", query: []string{"limit", "cursor"}, status: 200, result: pageOfVersion("Product"), headers: []string{"Link"}},
		"GET /products/{id}":       {summary: "Get a product", status: 200, result: perVersion("Product")},
		"POST /admin/authors":      {summary: "Add an author (admin)", body: same(ref("AuthorWrite")), status: 201, result: same(ref("Author")), headers: []string{"Location"}},
		"POST /admin/products":     {summary: "Add a product (admin)", body: perVersion("ProductWrite"), status: 201, result: perVersion("Product"), headers: []string{"Location"}},
		"PUT /admin/products/{id}": {summary: "Replace a product, archiving included (admin)", body: perVersion("ProductWrite"), status: 200, result: perVersion("Product")},

		"GET /users":      {summary: "List users: all active ones for an admin, oneself for a customer", query: []string{"limit", "cursor", "role", "embed"}, status: 200, result: pageOfVersion("User"), headers: []string{"Link"}},
		"POST /users":     {summary: "Sign up", body: perVersion("UserCreate"), status: 201, result: perVersion("User"), headers: []string{"Location"}, refusals: []string{quire.EEMAILTAKEN}},
		"GET /users/{id}": {summary: "Get a user", query: []string{"embed"}, status: 200, result: perVersion("User")},
		"PUT /users/{id}": {summary: "Replace a user; one's own email or password only with current_password", body: perVersion("UserWrite"), status: 200, result: perVersion("User"), refusals: []string{quire.EEMAILTAKEN}, problems: []string{quire.EWRONGPASSWORD}},
		"DELETE /users/{id}": {summary: "Delete a user; one's own with current_password, once its balance is zero",
			note: "An admin deletes another user with no body; the user.deleted event carries the balance the account held.",
			body: same(ref("DeleteRequest")), optionalBody: true, status: 204,
			refusals: []string{quire.EBALANCENOTZERO}, problems: []string{quire.EWRONGPASSWORD}},
		"GET /users/{id}/profile":         {summary: "Get a user's profile", status: 200, result: same(ref("Profile"))},
		"PUT /users/{id}/profile":         {summary: "Replace a user's profile", body: same(ref("Profile")), status: 200, result: same(ref("Profile"))},
		"POST /users/{id}/deposit":        {summary: "Record money received for an active account (admin)", note: "The back office's record of money the shop received outside the API; a customer's account is funded by the shop, never by the customer.", body: same(ref("Deposit")), status: 200, result: perVersion("User"), refusals: []string{quire.EACCOUNTCLOSED, quire.EBALANCELIMIT}},
		"POST /users/{id}/close":          {summary: "Close an account, keeping its balance", status: 200, result: perVersion("User"), refusals: []string{quire.EACCOUNTCLOSED}},
		"GET /admin/users":                {summary: "List every user in any status (admin)", query: []string{"limit", "cursor", "embed"}, status: 200, result: pageOfVersion("User"), headers: []string{"Link"}},
		"GET /cart":                       {summary: "The caller's cart at current prices", status: 200, result: perVersion("Cart")},
		"POST /cart":                      {summary: "Add copies of a book to the cart", note: "404 when no book has the product_id.", body: same(ref("CartAddition")), status: 200, result: perVersion("Cart"), refusals: []string{quire.EPRODUCTUNAVAILABLE, quire.ECARTFULL}, problems: []string{quire.ENOTFOUND}},
		"DELETE /cart/items/{product_id}": {summary: "Take a book out of the cart", status: 204},
		"POST /products/{id}/buy":         {summary: "Buy a book from the balance", body: same(ref("Quantity")), status: 201, result: same(ref("Order")), query: []string{"ifMatchPurchase"}, headers: []string{"Location"}, refusals: []string{quire.EINSUFFICIENTFUNDS, quire.EACCOUNTCLOSED, quire.EPRODUCTUNAVAILABLE}},
		"POST /pay":                       {summary: "Buy the whole cart from the balance", query: []string{"ifMatchPurchase"}, status: 201, result: same(ref("Order")), headers: []string{"Location"}, refusals: []string{quire.ECARTEMPTY, quire.EINSUFFICIENTFUNDS, quire.EACCOUNTCLOSED, quire.EPRODUCTUNAVAILABLE}},
		"GET /orders":                     {summary: "List the caller's orders", query: []string{"limit", "cursor"}, status: 200, result: same(page(ref("Order"))), headers: []string{"Link"}},
		"GET /orders/{id}":                {summary: "Get an order", status: 200, result: same(ref("Order"))},

		"GET /config": {summary: "The configuration document", note: "404 until an admin has stored one.",
			status: 200, result: same(ref("Config")), gzip: true, problems: []string{quire.ENOTFOUND}},
		"PUT /admin/config": {summary: "Replace the configuration document whole (admin)",
			note: fmt.Sprintf("The body is any JSON object of at most %d bytes (2 MiB): a longer one is 413, "+
				"anything but a JSON object 400. 201 when there was no document, 204 when one was replaced.", config.MaxBytes),
			body: same(ref("Config")), plainBody: true, status: 201, headers: []string{"Location"}, also: map[int][]string{204: nil}},
	}
}

// arrayOf is an array of at most n items.
func arrayOf(items schema, n int) schema {
	return schema{"type": "array", "items": items, "maxItems": n}
}

// page is a page of a list: at most rest.MaxLimit items.
func page(items schema) schema { return arrayOf(items, rest.MaxLimit) }

func pageOfVersion(name string) versioned {
	return func(v int) schema { return page(perVersion(name)(v)) }
}

// The documents, each built on first use: package initialisation does
// nothing, so the functions that link this package and never serve a
// document (every function's wiring reaches it) pay nothing for it.
var documents sync.Map // by the path it is served at, its func() ([]byte, error)

// Document returns version v's document as JSON, as it is served at
// /api/v<N>/openapi.json: every route a client of v calls, each once (see
// Describes). It returns an error for a version the API does not have.
func Document(v int) ([]byte, error) {
	if !slices.Contains(routes.Versions, v) {
		return nil, fmt.Errorf("openapi: no version %d", v)
	}
	return DocumentAt(routes.VersionPrefix(v) + routes.DocumentPath)
}

// DocumentAt returns the document served at path: at a version's
// /api/v<N>/openapi.json that version's, at /openapi.json the newest
// version's. Each names as its server the API's root, relative to where it
// is, so that the docs page and other tools call the API that served it,
// under any base path.
func DocumentAt(path string) ([]byte, error) {
	v, server := routes.Versions[len(routes.Versions)-1], "."
	if path != routes.DocumentPath {
		v, server = 0, "../.."
		for _, n := range routes.Versions {
			if path == routes.VersionPrefix(n)+routes.DocumentPath {
				v = n
			}
		}
		if v == 0 {
			return nil, fmt.Errorf("openapi: no document at %s", path)
		}
	}
	doc, _ := documents.LoadOrStore(path, sync.OnceValues(func() ([]byte, error) {
		return build(v, func(r routes.Route) bool { return Describes(v, r) }, server)
	}))
	return doc.(func() ([]byte, error))()
}

// Contract returns the document of every route of every version, as one:
// what the tests check each answer against, the docs page's own files
// included, built anew each time from the route table and the versions'
// retirements as they are.
func Contract() ([]byte, error) { return build(0, func(routes.Route) bool { return true }, ".") }

// Describes reports whether version v's document describes route r: a
// route outside versioning (but the docs page's own files and icon), the
// resource routes under v's prefix, and v's document itself. The resource routes
// without a prefix serve the same operations, the version chosen by
// Accept, as the document's description says.
func Describes(v int, r routes.Route) bool {
	switch {
	case r.Key() == "GET /docs/{file}" || r.Key() == "GET /favicon.ico":
		return false
	case r.Versioned:
		return r.Version == v
	default:
		return r.Version == 0 || r.Version == v
	}
}

// Handler serves a document, the same for every caller: under a version's
// prefix that version's, without one the newest version's (DocumentAt).
func Handler(w http.ResponseWriter, r *rest.Request) error {
	doc, err := DocumentAt(r.URL.Path)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	return rest.JSON(w, r, http.StatusOK, json.RawMessage(doc))
}

// build returns the document of the routes described (every route has an
// operation, and every operation a route), of version v (0: of every
// version, the contract), whose server is the API's root at server,
// relative to the document.
func build(v int, described func(routes.Route) bool, server string) ([]byte, error) {
	paths := map[string]schema{}
	problems := schema{} // the responses components operations refer to
	operations := operations()
	for _, r := range routes.All() {
		op, ok := operations[r.Resource().Key()]
		if !ok {
			return nil, fmt.Errorf("openapi: route %s has no operation", r.Resource().Key())
		}
		if !described(r) {
			continue
		}
		item, ok := paths[r.Path]
		if !ok {
			item = schema{}
			paths[r.Path] = item
		}
		operation := op.document(r, problems)
		if _, retiring := routes.Retirements[r.Version]; retiring && r.Versioned {
			operation["deprecated"] = true
		}
		item[strings.ToLower(r.Method)] = operation
	}
	for key := range operations {
		if !slices.ContainsFunc(routes.All(), func(r routes.Route) bool { return r.Resource().Key() == key }) {
			return nil, fmt.Errorf("openapi: operation %s has no route", key)
		}
	}
	version, served := fmt.Sprint(v), fmt.Sprintf("This document describes version %d: its resources under %s. "+
		"Each is also served without the prefix, where Accept: %s chooses this version (without it, version %d). "+
		"GET %s%s is this document, GET %s the newest version's; the docs page (GET /docs) shows each version's. ",
		v, routes.VersionPrefix(v), rest.VendorType(v), routes.Versions[0], routes.VersionPrefix(v), routes.DocumentPath, routes.DocumentPath)
	if retirement, ok := routes.Retirements[v]; ok {
		served += fmt.Sprintf("Version %d is deprecated from %s and gone from %s, when its routes answer 410 (%s). ",
			v, retirement.Deprecated.UTC().Format(time.DateOnly), retirement.Sunset.UTC().Format(time.DateOnly), retirement.Changelog)
	}
	if v == 0 {
		version, served = fmt.Sprint(routes.Versions[len(routes.Versions)-1]), "This document describes every route of every "+
			"version at once: each resource under each version's prefix and without one, where Accept chooses. "
	}
	components := schemas()
	doc := schema{
		"openapi": "3.1.0",
		"info": schema{
			"title":   "Quire",
			"version": version,
			"contact": schema{"name": "Quire", "url": "https://github.com/quireapi/quire"},
			"description": "A bookshop with prepaid accounts. " + served +
				"A resource's GET answers an ETag and, for a matching If-None-Match, 304; its PUT and DELETE take " +
				"If-Match and If-None-Match, and answer 412 when they fail (RFC 9110 section 13). " +
				"Errors are application/problem+json (RFC 9457) with a stable type per kind, and each operation lists the " +
				"statuses it can answer with the types each can have. A 409 of type conflict (a collision with another " +
				"request), a 429 and a 503 carry Retry-After: the same request, sent again after it, can succeed. A 409 of " +
				"any other type is a refusal of the current state that no retry fixes. A page of an origin the API allows " +
				"(CORS) may read every answer, errors included.",
		},
		"servers": []any{schema{"url": server, "description": "The API that serves this document, at its root: " +
			"the address the document was read from, less /openapi.json and any /api/v<N>."}},
		"tags":     append(tags(), eventsTag),
		"paths":    paths,
		"webhooks": webhooks(components),
		"security": []any{schema{"bearer": []any{}}},
		"components": schema{
			"securitySchemes": schema{"bearer": schema{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
			"parameters":      parameters(),
			"schemas":         components,
			"headers":         headers(),
			"responses":       problems,
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return used(b)
}

// used returns the document doc without the components nothing refers
// to, as a version's document has no use for another version's schemas.
func used(doc []byte) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	components := d["components"].(map[string]any)
	reached := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && !reached[ref] {
				reached[ref] = true
				kind, name, _ := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
				if c, ok := components[kind].(map[string]any); ok {
					walk(c[name])
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(d["paths"])
	walk(d["webhooks"])
	for kind, c := range components {
		if kind == "securitySchemes" {
			continue // named by security requirements, not $ref
		}
		for name := range c.(map[string]any) {
			if !reached["#/components/"+kind+"/"+name] {
				delete(c.(map[string]any), name)
			}
		}
	}
	b, err := json.Marshal(d)
	return escapeUnseen(b), err
}

// escapeUnseen writes each character of doc, a JSON text, that is not
// shown as itself (as quire.CheckText has them, and spaces other than
// ASCII's) as its \u escape, which JSON reads as the same character: so
// that a pattern naming such characters reads in review.
func escapeUnseen(doc []byte) []byte {
	var b bytes.Buffer
	for _, r := range string(doc) {
		if r < 0x7f || !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.White_Space,
			unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point) {
			b.WriteRune(r)
			continue
		}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", hi, lo)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.Bytes()
}

// tags are the resource groups, in the route table's order: each
// operation's tag is its group, so that a reader of the docs page finds
// an operation with the others of its resource.
func tags() []any {
	var out []any
	for _, g := range routes.Groups() {
		out = append(out, schema{"name": g.Name, "description": g.Description})
	}
	return out
}

// document returns the operation object of route r. Its problem responses
// that problems has components for refer to them, and it adds the ones it
// needs to problems.
func (op operation) document(r routes.Route, problems schema) schema {
	out := schema{
		"operationId": operationID(r),
		"summary":     op.summary,
		"tags":        []any{r.Group},
		"responses":   op.responses(r, problems),
	}
	if r.Access == routes.Public {
		out["security"] = []any{}
	}
	var notes []string
	switch r.Access {
	case routes.Admin:
		notes = append(notes, "Needs a token with the admin role.")
	case routes.Public:
		notes = append(notes, "Public: it needs no token.")
	}
	if r.Idempotency == routes.KeyRequired {
		notes = append(notes, "Needs an idempotency key: Idempotency-Key, or X-Idempotency-Key alone, its older name.")
	}
	var params []any
	for _, name := range pathParameters(r) {
		s := ref("ID")
		if name == "file" {
			s = schema{"type": "string", "pattern": `^[a-z0-9.-]+$`}
		}
		params = append(params, schema{"name": name, "in": "path", "required": true, "schema": s})
	}
	for _, name := range op.parameters(r) {
		params = append(params, schema{"$ref": "#/components/parameters/" + name})
	}
	if params != nil {
		out["parameters"] = params
	}
	if op.note != "" {
		notes = append(notes, op.note)
	}
	if r.Versioned && r.Version != 0 {
		notes = append(notes, fmt.Sprintf("Also served at %s, where Accept: %s chooses this version.",
			r.Resource().Path, rest.VendorType(r.Version)))
	}
	if notes == nil {
		notes = []string{op.summary + "."}
	}
	out["description"] = strings.Join(notes, " ")
	if op.body != nil {
		c := content(r, op.body)
		if op.plainBody {
			c = schema{rest.MediaTypeJSON: schema{"schema": op.body(routes.Versions[0])}}
		}
		out["requestBody"] = schema{"required": !op.optionalBody, "content": c}
	}
	return out
}

// pathParameters returns the names of route r's path parameters.
func pathParameters(r routes.Route) []string {
	var names []string
	for _, seg := range strings.Split(r.Path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			names = append(names, strings.TrimSuffix(name, "}"))
		}
	}
	return names
}

// parameters returns the names of the query and header parameters of
// route r, as components/parameters names them: the operation's own, the
// conditional headers of a resource's GET, PUT and DELETE, Accept-Encoding
// where the body may be compressed, and the idempotency keys.
func (op operation) parameters(r routes.Route) []string {
	names := slices.Clone(op.query)
	if conditional(r) || op.revalidated || r.Versioned && r.Method == http.MethodDelete {
		names = append(names, "ifMatch", "ifNoneMatch")
	}
	if op.gzip {
		names = append(names, "acceptEncoding")
	}
	switch r.Idempotency {
	case routes.KeyRequired:
		names = append(names, "idempotencyKeyRequired", "xIdempotencyKey")
	case routes.KeyOptional:
		names = append(names, "idempotencyKey", "xIdempotencyKey")
	}
	return names
}

// conditional reports whether route r is a resource's GET or PUT, whose
// successes carry the ETag of the resource's representation.
func conditional(r routes.Route) bool {
	return r.Versioned && (r.Method == http.MethodGet || r.Method == http.MethodPut)
}

// responses returns the responses of route r: its successes, its 304 if
// it has one, and its errors (see failures), whose problem responses refer
// to the components of problems where they can.
func (op operation) responses(r routes.Route, problems schema) schema {
	// The headers of every success of r, beyond the operation's own.
	var more []string
	if conditional(r) {
		more = append(more, "ETag")
	}
	if r.Versioned && r.Method == http.MethodGet {
		more = append(more, "Cache-Control")
	}
	if r.Versioned {
		more = append(more, "Vary")
	}
	if op.gzip {
		more = append(more, "Vary", "Content-Encoding")
	}
	if r.Idempotency != routes.KeyNone {
		more = append(more, rest.ReplayedHeader)
	}
	var body schema
	if op.result != nil {
		body = content(r, op.result)
	}
	if op.media != nil {
		body = schema{}
		for _, m := range op.media {
			text := schema{"type": "string"}
			if op.textLen > 0 {
				text["maxLength"] = op.textLen
			}
			body[m] = schema{"schema": text}
			if strings.HasPrefix(m, "image/") {
				body[m] = schema{} // bytes: OpenAPI 3.1 gives them no schema
			}
		}
	}
	out := schema{
		fmt.Sprint(op.status): response(http.StatusText(op.status), body, op.headers, more),
		"default":             problemRef(problems, otherErrors, otherErrorsResponse),
	}
	for status, headers := range op.also {
		out[fmt.Sprint(status)] = response(http.StatusText(status), nil, headers, more)
	}
	for status, codes := range byStatus(op.failures(r)) {
		out[fmt.Sprint(status)] = problemResponses(problems, codes)
	}
	if writes(r) {
		out["409"] = op.conflict()
	}
	if r.Versioned && r.Method == http.MethodGet {
		out["304"] = response("Not Modified: If-None-Match names the current representation; no body", nil,
			[]string{"ETag", "Cache-Control", "Vary"}, nil)
	}
	if op.revalidated {
		out["304"] = response("Not Modified: If-None-Match names the current representation; no body", nil,
			[]string{"ETag", "Cache-Control"}, nil)
	}
	return out
}

// response is a response object with a description, content (or nil, for
// none) and the headers named, each once, with the CORS headers every
// answer to an allowed origin carries.
func response(description string, content schema, headers ...[]string) schema {
	out := schema{"description": description}
	if content != nil {
		out["content"] = content
	}
	hs := schema{}
	for _, h := range slices.Concat(append(headers, corsHeaders())...) {
		hs[h] = headerRef(h)
	}
	out["headers"] = hs
	return out
}

// content maps each media type a route answers (or takes) to the schema of
// its version: a versioned path's application/json and its version's type,
// and on a path without a version, application/json (v1) and every
// version's type.
func content(r routes.Route, s versioned) schema {
	if !r.Versioned {
		return schema{rest.MediaTypeJSON: schema{"schema": s(1)}}
	}
	out := schema{}
	if r.Version != 0 {
		out[rest.MediaTypeJSON] = schema{"schema": s(r.Version)}
		out[rest.VendorType(r.Version)] = schema{"schema": s(r.Version)}
		return out
	}
	// application/json is the oldest version's, or, while it is being
	// retired (routes.Retirements), its or its successors' up to the first
	// that is not.
	plain := []any{}
	for _, v := range routes.Versions {
		plain = append(plain, s(v))
		if _, retiring := routes.Retirements[v]; !retiring {
			break
		}
	}
	out[rest.MediaTypeJSON] = schema{"schema": plain[0]}
	if len(plain) > 1 {
		out[rest.MediaTypeJSON] = schema{"schema": schema{"anyOf": plain}}
	}
	for _, v := range routes.Versions {
		out[rest.VendorType(v)] = schema{"schema": s(v)}
	}
	return out
}

// operationID is "getUsersId" for GET /users/{id}, with the version:
// "getV2UsersId" for GET /api/v2/users/{id}.
func operationID(r routes.Route) string {
	id := strings.ToLower(r.Method)
	if r.Path == "/" {
		return id + "Root"
	}
	if r.Version != 0 {
		id += fmt.Sprintf("V%d", r.Version)
	}
	for _, seg := range strings.Split(r.Resource().Path, "/") {
		seg = strings.Trim(seg, "{}.")
		for _, part := range strings.FieldsFunc(seg, func(c rune) bool { return c == '_' || c == '-' || c == '.' }) {
			id += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	return id
}
