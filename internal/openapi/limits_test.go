package openapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quireapi/quire/internal/openapi"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// bound is one limit the document puts on what a request may carry: a
// keyword of the schema of a body's field, a query parameter or a header.
type bound struct {
	where   string // "UserWriteV1.first_name", "ID", "parameters/limit"
	keyword string // maxLength, minLength, maximum, minimum or multipleOf
	schema  *openapi3.Schema
}

// requestBounds returns every bound of every request body's schema (its
// read-only fields aside) and of every query and header parameter, once
// each, in a stable order.
func requestBounds(doc *openapi3.T) []bound {
	found := map[string]bound{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || ref.Value.ReadOnly {
			return
		}
		if name, ok := strings.CutPrefix(ref.Ref, "#/components/schemas/"); ok {
			where = name
		}
		s := ref.Value
		for keyword, set := range map[string]bool{
			"maxLength": s.MaxLength != nil, "minLength": s.MinLength > 0,
			"maximum": s.Max != nil, "minimum": s.Min != nil, "multipleOf": s.MultipleOf != nil,
			"maxItems": s.MaxItems != nil, "minItems": s.MinItems > 0,
			"exclusiveMaximum": s.ExclusiveMax != (openapi3.ExclusiveBound{}),
			"exclusiveMinimum": s.ExclusiveMin != (openapi3.ExclusiveBound{}),
		} {
			if set {
				found[where+" "+keyword] = bound{where, keyword, s}
			}
		}
		for name, p := range s.Properties {
			walk(where+"."+name, p)
		}
		walk(where+"[]", s.Items)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				walk("", mt.Schema)
			}
		}
	}
	for name, p := range doc.Components.Parameters {
		if in := p.Value.In; in == "query" || in == "header" {
			walk("parameters/"+name, p.Value.Schema)
		}
	}
	var out []bound
	for _, key := range slices.Sorted(maps.Keys(found)) {
		out = append(out, found[key])
	}
	return out
}

// probe sends one request that carries a value where a bound applies.
type probe struct {
	// send sends the request with value: a field's JSON text, or a
	// parameter's text.
	send func(t *testing.T, value string) servicetest.Response
	// ok is the status of a request whose value is within the bounds.
	ok int
	// pointer is what a refusal names: a field, or a query parameter as
	// /<name>; "" for a header, which is named by nothing.
	pointer string
	// param: value is a parameter's text, not a field's JSON.
	param bool
	// text returns a string of n characters the server takes but for its
	// length; by default n letters.
	text func(n int) string
}

// TestLimits: every bound the document puts on a request is the server's.
// For each, a request at the bound is taken and one just past it is refused
// with 400, naming the field or query parameter, through the
// real handlers and DynamoDB Local. The bounds come from the document, not
// from the Go constants, so a schema that drifts from the server's checks
// fails here; a bound without a probe fails too.
func TestLimits(t *testing.T) {
	doc := contract(t)
	probes := newProbes(t, servicetest.New(t))
	for _, bd := range requestBounds(doc) {
		t.Run(bd.where+" "+bd.keyword, func(t *testing.T) {
			p, ok := probes[bd.where]
			if !ok {
				t.Fatalf("%s has a %s in the document but no probe in this test: add one", bd.where, bd.keyword)
			}
			at, past := values(t, bd, p)
			for _, v := range []struct {
				value string
				valid bool
			}{{at, true}, {past, false}} {
				if err := bd.schema.VisitJSON(decode(t, v.value, p), openapi3.EnableJSONSchema2020()); (err == nil) != v.valid {
					t.Fatalf("the document's schema on %.40s: %v, want valid %v", v.value, err, v.valid)
				}
			}
			if r := p.send(t, at); r.StatusCode != p.ok {
				t.Errorf("at the %s (%.40s...): %d %.300s, want %d", bd.keyword, at, r.StatusCode, r.Body, p.ok)
			}
			r := p.send(t, past)
			var prob rest.Problem
			if err := json.Unmarshal([]byte(r.Body), &prob); err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != 400 || prob.Type != rest.ProblemType(quire.EINVALID) {
				t.Fatalf("past the %s (%.40s...): %d %.300s, want 400", bd.keyword, past, r.StatusCode, r.Body)
			}
			named := len(prob.Errors) == 0
			if p.pointer != "" {
				named = slices.ContainsFunc(prob.Errors, func(e quire.FieldError) bool { return e.Pointer == p.pointer })
			}
			if !named {
				t.Errorf("past the %s: %s, want the field %q named", bd.keyword, r.Body, p.pointer)
			}
		})
	}
}

// values returns a value at bd's bound and one just past it, as probe p
// sends them.
func values(t *testing.T, bd bound, p probe) (at, past string) {
	t.Helper()
	s := bd.schema
	str := func(n int) string {
		if p.param {
			return p.text(n)
		}
		b, _ := json.Marshal(p.text(n))
		return string(b)
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	step := 1.0
	if s.MultipleOf != nil {
		step = *s.MultipleOf
	}
	switch bd.keyword {
	case "maxLength":
		return str(int(*s.MaxLength)), str(int(*s.MaxLength) + 1)
	case "minLength":
		return str(int(s.MinLength)), str(int(s.MinLength) - 1)
	case "maximum":
		return num(*s.Max), num(*s.Max + step)
	case "minimum":
		return num(*s.Min), num(*s.Min - step)
	case "multipleOf":
		base := 0.0
		if s.Min != nil {
			base = *s.Min
		}
		return num(base + step), num(base + step/2)
	}
	t.Fatalf("no values for %s", bd.keyword)
	return "", ""
}

// decode returns value as the schema checks it.
func decode(t *testing.T, value string, p probe) any {
	t.Helper()
	if p.param {
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			return float64(n)
		}
		return value
	}
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// sender sends a request with a JSON body, as some caller.
type sender func(t *testing.T, method, path, body string) servicetest.Response

// object returns a JSON object of the members given as JSON texts.
func object(members map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(members)) {
		parts = append(parts, strconv.Quote(k)+":"+members[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// newProbes returns a probe for each place the document bounds, against
// api: a signed-up customer with a balance, another to deposit to, an
// author and a book for sale at 0.01.
func newProbes(t *testing.T, api *servicetest.API) map[string]probe {
	t.Helper()
	n := 0
	email := func(size int) string {
		n++
		local := fmt.Sprintf("limits%d-", n)
		const domain = "@example.com"
		return local + strings.Repeat("a", max(size-len(local)-len(domain), 0)) + domain
	}
	letters := func(n int) string { return strings.Repeat("a", n) }
	anon := sender(func(t *testing.T, method, path, body string) servicetest.Response {
		return api.Do(t, method, path, body)
	})
	as := func(c *servicetest.Client) sender {
		return func(t *testing.T, method, path, body string) servicetest.Response { return c.Do(t, method, path, body) }
	}
	// field is the probe of one field of a body whose other members are
	// others' (called for each request); a request within the bounds
	// answers ok.
	field := func(send sender, method, path, name string, others func() map[string]string, ok int) probe {
		return probe{
			send: func(t *testing.T, value string) servicetest.Response {
				members := others()
				members[name] = value
				return send(t, method, path, object(members))
			},
			ok: ok, pointer: "/" + name, text: letters,
		}
	}
	none := func() map[string]string { return map[string]string{} }
	created := func(tb testing.TB, r servicetest.Response) quire.ID {
		tb.Helper()
		var v struct{ ID quire.ID }
		if r.StatusCode != 201 || json.Unmarshal([]byte(r.Body), &v) != nil {
			tb.Fatalf("%d %s", r.StatusCode, r.Body)
		}
		return v.ID
	}
	signUp := func(version int) func() map[string]string {
		return func() map[string]string {
			m := map[string]string{"email": strconv.Quote(email(40)), "password": `"a long passphrase"`}
			if version == 1 {
				m["first_name"], m["last_name"] = `"Edith"`, `"Clarke"`
			} else {
				m["name"] = `"Edith Clarke"`
			}
			return m
		}
	}

	admin := api.As(t, 1, quire.RoleAdmin)
	buyer := created(t, api.Do(t, "POST", "/users", object(signUp(1)())))
	payee := created(t, api.Do(t, "POST", "/users", object(signUp(1)())))
	customer := api.As(t, buyer, quire.RoleCustomer)
	author := created(t, admin.Do(t, "POST", "/admin/authors", `{"name":"Ada Lovelace"}`)).String()
	book := created(t, admin.Do(t, "POST", "/admin/products", `{"name":"Notes","price":0.01,"status":"AVAILABLE","author_id":`+author+`}`)).String()
	if r := admin.Do(t, "POST", fmt.Sprintf("/users/%d/deposit", buyer), `{"amount":10}`); r.StatusCode != 200 {
		t.Fatalf("deposit: %d %s", r.StatusCode, r.Body)
	}
	if r := admin.Do(t, "PUT", "/admin/config", `{"banner":"Quire"}`); r.StatusCode != 201 {
		t.Fatalf("config: %d %s", r.StatusCode, r.Body)
	}
	tag := customer.Do(t, "GET", "/products/"+book, "").Header.Get("ETag")
	// other returns an entity tag of n characters that no representation
	// has, and tags a list of n characters of the book's and another.
	other := func(n int) string { return `"` + letters(n-2) + `"` }
	tags := func(n int) string { return tag + ", " + other(n-len(tag)-2) }
	// cursor returns a cursor of n characters: an id's, the largest at
	// rest.MaxCursorLen, whose page is empty.
	cursor := func(n int) string {
		digits := quire.MaxID.String() + strings.Repeat("1", n)
		return base64.RawURLEncoding.EncodeToString([]byte(digits[:n*6/8]))
	}
	product := func() map[string]string {
		return map[string]string{"name": `"A book"`, "price": "12.50", "status": `"AVAILABLE"`, "author_id": author}
	}
	// Each addition to a cart is a new customer's, so that none fills up.
	next := quire.ID(1000)
	fresh := sender(func(t *testing.T, method, path, body string) servicetest.Response {
		next++
		return api.As(t, next, quire.RoleCustomer).Do(t, method, path, body)
	})
	withText := func(p probe, text func(int) string) probe { p.text = text; return p }
	header := func(name string) probe {
		return probe{
			send: func(t *testing.T, value string) servicetest.Response {
				// One body for every key: a key sent twice replays its answer.
				return admin.Do(t, "POST", "/admin/authors", `{"name":"Keyed"}`, name, value)
			},
			ok: 201, param: true, text: letters,
		}
	}
	// read is the probe of a header of a request of c without a body,
	// which answers ok within the bounds.
	read := func(c *servicetest.Client, method, path, name string, ok int, text func(int) string) probe {
		return probe{
			send: func(t *testing.T, value string) servicetest.Response { return c.Do(t, method, path, "", name, value) },
			ok:   ok, param: true, text: text,
		}
	}
	replaced := fmt.Sprintf("/users/%d", payee)
	replace := func(version int) func() map[string]string {
		return func() map[string]string {
			m := signUp(version)()
			delete(m, "password")
			m["role"], m["status"] = `"customer"`, `"ACTIVE"`
			return m
		}
	}
	website := func(n int) string { return "https://example.com/" + letters(n-len("https://example.com/")) }
	profile := fmt.Sprintf("/users/%d/profile", buyer)
	return map[string]probe{
		// Within the bounds, a login of nobody: 401.
		"Credentials.email": withText(field(anon, "POST", "/login", "email",
			func() map[string]string { return map[string]string{"password": `"a long passphrase"`} }, 401), email),
		"Credentials.password": field(anon, "POST", "/login", "password",
			func() map[string]string { return map[string]string{"email": `"nobody@example.com"`} }, 401),

		// A current password where none is checked (a sign-up, an admin's
		// write of another user) is ignored within the bounds.
		"UserCreateV1.current_password": field(anon, "POST", "/users", "current_password", signUp(1), 201),
		"UserCreateV2.current_password": field(anon, "POST", "/api/v2/users", "current_password", signUp(2), 201),
		"UserWriteV1.current_password":  field(as(admin), "PUT", replaced, "current_password", replace(1), 200),
		"UserWriteV2.current_password":  field(as(admin), "PUT", "/api/v2"+replaced, "current_password", replace(2), 200),
		"DeleteRequest.current_password": {
			send: func(t *testing.T, value string) servicetest.Response {
				id := created(t, api.Do(t, "POST", "/users", object(signUp(1)())))
				return admin.Do(t, "DELETE", fmt.Sprintf("/users/%d", id), object(map[string]string{"current_password": value}))
			},
			ok: 204, pointer: "/current_password", text: letters,
		},
		// Within the bounds, a refresh token of no session: 401.
		"RefreshRequest.refresh_token": field(anon, "POST", "/tokens", "refresh_token", none, 401),

		"UserCreateV1.email":      withText(field(anon, "POST", "/users", "email", signUp(1), 201), email),
		"UserCreateV1.first_name": field(anon, "POST", "/users", "first_name", signUp(1), 201),
		"UserCreateV1.last_name":  field(anon, "POST", "/users", "last_name", signUp(1), 201),
		"UserCreateV1.password":   field(anon, "POST", "/users", "password", signUp(1), 201),
		"UserCreateV2.email":      withText(field(anon, "POST", "/api/v2/users", "email", signUp(2), 201), email),
		"UserCreateV2.name":       field(anon, "POST", "/api/v2/users", "name", signUp(2), 201),
		"UserCreateV2.password":   field(anon, "POST", "/api/v2/users", "password", signUp(2), 201),
		// An admin replaces another user, whose email and password need
		// no current_password.
		"UserWriteV1.email":      withText(field(as(admin), "PUT", replaced, "email", replace(1), 200), email),
		"UserWriteV1.first_name": field(as(admin), "PUT", replaced, "first_name", replace(1), 200),
		"UserWriteV1.last_name":  field(as(admin), "PUT", replaced, "last_name", replace(1), 200),
		"UserWriteV1.password":   field(as(admin), "PUT", replaced, "password", replace(1), 200),
		"UserWriteV2.email":      withText(field(as(admin), "PUT", "/api/v2"+replaced, "email", replace(2), 200), email),
		"UserWriteV2.name":       field(as(admin), "PUT", "/api/v2"+replaced, "name", replace(2), 200),
		"UserWriteV2.password":   field(as(admin), "PUT", "/api/v2"+replaced, "password", replace(2), 200),

		"Profile.bio":      field(as(customer), "PUT", profile, "bio", none, 200),
		"Profile.location": field(as(customer), "PUT", profile, "location", none, 200),
		"Profile.website":  withText(field(as(customer), "PUT", profile, "website", none, 200), website),
		"Deposit.amount":   field(as(admin), "POST", fmt.Sprintf("/users/%d/deposit", payee), "amount", none, 200),

		"AuthorWrite.name":     field(as(admin), "POST", "/admin/authors", "name", none, 201),
		"ProductWriteV1.name":  field(as(admin), "POST", "/admin/products", "name", product, 201),
		"ProductWriteV1.price": field(as(admin), "POST", "/admin/products", "price", product, 201),
		"ProductWriteV2.name":  field(as(admin), "POST", "/api/v2/admin/products", "name", product, 201),
		"ProductWriteV2.price": field(as(admin), "POST", "/api/v2/admin/products", "price", product, 201),

		"CartAddition.quantity": field(fresh, "POST", "/cart", "quantity",
			func() map[string]string { return map[string]string{"product_id": book} }, 200),
		// No book has the smallest id or the largest: within the bounds,
		// the id is looked for, and 404.
		"ID": field(fresh, "POST", "/cart", "product_id",
			func() map[string]string { return map[string]string{"quantity": "1"} }, 404),
		"Quantity.quantity": field(as(customer), "POST", "/products/"+book+"/buy", "quantity", none, 201),

		"parameters/limit": {
			send: func(t *testing.T, value string) servicetest.Response {
				return customer.Do(t, "GET", "/products?limit="+value, "")
			},
			ok: 200, pointer: "/limit", param: true,
		},
		"parameters/cursor": {
			send: func(t *testing.T, value string) servicetest.Response {
				return customer.Do(t, "GET", "/products?cursor="+value, "")
			},
			ok: 200, pointer: "/cursor", param: true, text: cursor,
		},
		"parameters/ifMatch":     read(customer, "GET", "/products/"+book, "If-Match", 200, tags),
		"parameters/ifNoneMatch": read(customer, "GET", "/products/"+book, "If-None-Match", 200, other),
		"parameters/ifMatchPurchase": {
			send: func(t *testing.T, value string) servicetest.Response {
				return customer.Do(t, "POST", "/products/"+book+"/buy", `{"quantity":1}`, "If-Match", value)
			},
			ok: 201, param: true, text: tags,
		},
		"parameters/acceptEncoding":         read(customer, "GET", "/config", "Accept-Encoding", 200, letters),
		"parameters/idempotencyKey":         header("Idempotency-Key"),
		"parameters/idempotencyKeyRequired": header("Idempotency-Key"),
		"parameters/xIdempotencyKey":        header("X-Idempotency-Key"),
	}
}

// contract returns the contract, the document of every version, parsed.
func contract(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := openapi.Contract()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
