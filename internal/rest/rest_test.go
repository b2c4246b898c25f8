package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

type thing struct {
	Name  string      `json:"name"`
	Count int         `json:"count"`
	Price quire.Money `json:"price"`
	Inner struct {
		Flag bool `json:"flag"`
	} `json:"inner"`
}

func decodeReq(ct, body string) error {
	r := httptest.NewRequest("POST", "/x", strings.NewReader(body))
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	var v thing
	return Decode(r, &v)
}

// A body sent compressed (any Content-Encoding but identity) is 415 on
// every route that reads one, whichever reader it uses, even when it holds
// plain JSON: a client that compresses learns it at once.
func TestCompressedBody(t *testing.T) {
	for _, ce := range []string{"gzip", "br", "GZIP", "identity", "IDENTITY"} {
		for name, read := range map[string]func(*http.Request) error{
			"Decode":   func(r *http.Request) error { var v thing; return Decode(r, &v) },
			"ReadJSON": func(r *http.Request) error { _, err := ReadJSON(r, MaxBodyBytes); return err },
		} {
			r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"name":"a"}`))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Content-Encoding", ce)
			want := quire.EMEDIATYPE
			if strings.EqualFold(ce, "identity") {
				want = ""
			}
			if got := quire.ErrorCode(read(r)); got != want {
				t.Errorf("%s with Content-Encoding %s: %q, want %q", name, ce, got, want)
			}
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body string
		code           string
		fields         []quire.FieldError
	}{
		{"ok", "application/json", `{"name":"a","count":2,"price":1.25}`, "", nil},
		{"ok charset", "application/json; charset=UTF-8", `{"name":"a"}`, "", nil},
		{"ok +json", "application/merge-patch+json", `{"name":"a"}`, "", nil},
		{"no content type", "", `{}`, quire.EMEDIATYPE, nil},
		{"text", "text/plain", `{}`, quire.EMEDIATYPE, nil},
		{"form", "application/x-www-form-urlencoded", `a=b`, quire.EMEDIATYPE, nil},
		{"latin1", "application/json; charset=latin1", `{}`, quire.EMEDIATYPE, nil},
		{"bad media type", "application/json; =", `{}`, quire.EMEDIATYPE, nil},
		{"empty", "application/json", ``, quire.EINVALID, nil},
		{"malformed", "application/json", `{"name":`, quire.EINVALID, nil},
		{"syntax", "application/json", `{"name" "a"}`, quire.EINVALID, nil},
		{"trailing", "application/json", `{"name":"a"} {}`, quire.EINVALID, nil},
		{"array", "application/json", `[1]`, quire.EINVALID, nil},
		{"unknown field", "application/json", `{"nam":"a"}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/nam", Detail: "is not a field of this resource"}}},
		{"wrong type", "application/json", `{"count":"two"}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: "must be a JSON number"}}},
		{"nested wrong type", "application/json", `{"inner":{"flag":1}}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/inner/flag", Detail: "must be a JSON boolean"}}},
		{"bad money", "application/json", `{"price":1.255}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/price", Detail: quire.ErrMoney.Error()}}},
		{"money as a string", "application/json", `{"price":"1.25"}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/price", Detail: quire.ErrMoney.Error()}}},
		{"not a whole number", "application/json", `{"count":1.5}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: WholeNumber}}},
		{"a whole number with a fraction", "application/json", `{"count":2.0000000000000001}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: WholeNumber}}},
		{"a whole number with an exponent", "application/json", `{"count":1e1}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: WholeNumber}}},
		{"invalid UTF-8 in a value", "application/json", "{\"name\":\"Gr\xe2ce\"}", quire.EINVALID,
			[]quire.FieldError{{Pointer: "/name", Detail: "is not valid UTF-8"}}},
		{"invalid UTF-8 deep inside", "application/json", "{\"inner\":{\"flag\":true},\"list\":[\"a\",{\"b\":\"\xff\"}]}", quire.EINVALID,
			[]quire.FieldError{{Pointer: "/list/1/b", Detail: "is not valid UTF-8"}}},
		{"invalid UTF-8 in a name", "application/json", "{\"inner\":{\"fl\xffag\":true}}", quire.EINVALID,
			[]quire.FieldError{{Pointer: "/inner", Detail: "has a member name that is not valid UTF-8"}}},
		{"escaped replacement character", "application/json", `{"name":"\ufffd"}`, "", nil},
		{"a lone high surrogate", "application/json", `{"name":"a\ud800b"}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/name", Detail: "is not valid UTF-8"}}},
		{"a lone low surrogate", "application/json", `{"inner":{"\udc00":true}}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/inner", Detail: "has a member name that is not valid UTF-8"}}},
		{"a high surrogate before another escape", "application/json", `{"name":"\ud800\u0041"}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/name", Detail: "is not valid UTF-8"}}},
		{"a surrogate pair", "application/json", `{"name":"\ud83d\ude00 \n\\ud800"}`, "", nil},
		{"duplicate member", "application/json", `{"count":1,"count":99}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: "appears twice in its object"}}},
		{"duplicate member deep inside", "application/json", `{"inner":{"flag":true,"flag":false}}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/inner/flag", Detail: "appears twice in its object"}}},
		{"a/b~ escaped", "application/json", `{"x":{"a/b~":1,"a/b~":2}}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/x/a~1b~0", Detail: "appears twice in its object"}}},
		{"duplicate member in another case", "application/json", `{"count":1,"Count":99}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/Count", Detail: `appears twice in its object, once as "count"`}}},
		{"duplicate member under Unicode folding", "application/json", "{\"inner\":{\"flag\":true,\"FLA\u212a\":false}}", quire.EINVALID, nil},
		{"duplicate member escaped", "application/json", `{"count":1,"\u0063ount":2}`, quire.EINVALID,
			[]quire.FieldError{{Pointer: "/count", Detail: "appears twice in its object"}}},
		{"a value like a name", "application/json", `{"name":"count","count":1}`, "", nil},
		{"same name in two objects", "application/json", `{"name":"a","inner":{"flag":true}}`, "", nil},
		{"too large", "application/json", `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, quire.ETOOLARGE, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeReq(tc.ct, tc.body)
			if got := quire.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if tc.fields != nil {
				e, _ := errors.AsType[*quire.Error](err)
				if diff := cmp.Diff(tc.fields, e.Fields); diff != "" {
					t.Errorf("fields (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// FuzzDecode checks that no body makes Decode panic or fail with anything
// but a client error, and that a body it takes is valid UTF-8 and names no
// member of an object twice, in any case.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"a","count":1,"price":2.50}`, `{`, `[]`, `null`, `{"inner":{"flag":true}}`, "\xff",
		`{"count":1,"count":2}`, "{\"name\":\"\xc3\"}", `{"a":[{"b":[1,{"c":2,"c":3}]}]}`, `{"count":1.5}`,
		`{"inner":{"flag":true,"Flag":false}}`, `{"name":"a","n\u0061me":"b"}`, `{"name":"\ud800"}`, `{"name":"\ud83d\ude00"}`} {
		f.Add("application/json", s)
	}
	f.Fuzz(func(t *testing.T, ct, body string) {
		switch code := quire.ErrorCode(decodeReq(ct, body)); code {
		case "":
			if !utf8.ValidString(body) {
				t.Fatalf("Decode(%q, %q) takes a body that is not UTF-8", ct, body)
			}
			if name, ok := twice(body); ok {
				t.Fatalf("Decode(%q, %q) takes a body that names %q twice", ct, body, name)
			}
			var v any
			if json.Unmarshal([]byte(body), &v) == nil && strings.ContainsRune(fmt.Sprint(v), utf8.RuneError) &&
				!strings.ContainsRune(body, utf8.RuneError) && !strings.Contains(strings.ToLower(body), "fffd") {
				t.Fatalf("Decode(%q, %q) takes a body whose text turns into U+FFFD", ct, body)
			}
		case quire.EINVALID, quire.EMEDIATYPE, quire.ETOOLARGE:
		default:
			t.Fatalf("Decode(%q, %q): code %q", ct, body, code)
		}
	})
}

// twice returns a member name that an object of body, well-formed JSON,
// has twice up to case (as encoding/json matches names), read token by
// token.
func twice(body string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	var objects []map[string]bool
	expectName := []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		n := len(objects)
		switch tok {
		case json.Delim('{'):
			objects, expectName = append(objects, map[string]bool{}), append(expectName, true)
			continue
		case json.Delim('['):
			objects, expectName = append(objects, nil), append(expectName, false)
			continue
		case json.Delim('}'), json.Delim(']'):
			objects, expectName = objects[:n-1], expectName[:n-1]
		default:
			if name, ok := tok.(string); ok && n > 0 && objects[n-1] != nil && expectName[n-1] {
				for seen := range objects[n-1] {
					if strings.EqualFold(seen, name) {
						return name, true
					}
				}
				objects[n-1][name], expectName[n-1] = true, false
				continue
			}
		}
		if n := len(objects); n > 0 && objects[n-1] != nil {
			expectName[n-1] = true
		}
	}
}

func problemOf(t *testing.T, rec *httptest.ResponseRecorder) Problem {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != ProblemMediaType {
		t.Fatalf("Content-Type = %q", ct)
	}
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestErrorHidesInternals(t *testing.T) {
	rec := httptest.NewRecorder()
	Error(rec, httptest.NewRequest("GET", "/users/1", nil), errors.New("dial tcp 10.0.0.1: secret table quire-users-xyz"))
	p := problemOf(t, rec)
	if rec.Code != 500 || p.Status != 500 || p.Type != ProblemTypeBase+"internal" {
		t.Errorf("got %d %+v", rec.Code, p)
	}
	if strings.Contains(rec.Body.String(), "secret") || strings.Contains(rec.Body.String(), "10.0.0.1") {
		t.Errorf("body leaks the cause: %s", rec.Body)
	}
}

func TestErrorShowsClientErrors(t *testing.T) {
	rec := httptest.NewRecorder()
	Error(rec, httptest.NewRequest("POST", "/users", nil), quire.Invalid(quire.FieldError{Pointer: "/email", Detail: "is required"}))
	want := Problem{
		Type: ProblemTypeBase + "invalid", Title: "Invalid request", Status: 400,
		Detail: "The request body has invalid fields.", Instance: "/users",
		Errors: []quire.FieldError{{Pointer: "/email", Detail: "is required"}},
	}
	if diff := cmp.Diff(want, problemOf(t, rec)); diff != "" || rec.Code != 400 {
		t.Errorf("status %d, problem (-want +got):\n%s", rec.Code, diff)
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	for _, code := range []string{quire.EINVALID, quire.ENOTFOUND, quire.ECONFLICT, quire.ETOOLARGE, quire.EMEDIATYPE,
		quire.EMETHOD, quire.EUNAVAILABLE, quire.ETHROTTLED, quire.EGATEWAY, quire.EINTERNAL,
		quire.EINSUFFICIENTFUNDS, quire.EACCOUNTCLOSED, quire.EBALANCELIMIT, quire.EBALANCENOTZERO, quire.ECARTEMPTY,
		quire.EPRODUCTUNAVAILABLE, quire.ECARTFULL, quire.EEMAILTAKEN} {
		if _, ok := codes[code]; !ok {
			t.Errorf("code %s has no status", code)
		}
	}
}

func TestGatewayProblemIsTheSameShape(t *testing.T) {
	tmpl := GatewayProblem(quire.ENOTFOUND, 404, `"No resource at this path."`)
	filled := strings.NewReplacer("$context.path", "/nope", "$context.requestId", "r1").Replace(tmpl)
	var p Problem
	if err := json.Unmarshal([]byte(filled), &p); err != nil {
		t.Fatalf("template %s is not JSON: %v", tmpl, err)
	}
	want := NewProblem(quire.ENOTFOUND, "No resource at this path.")
	want.Instance, want.RequestID = "/nope", "r1"
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// ParsePage takes one limit and one cursor of Quire's; anything else is 400
// naming the parameter.
func TestParsePage(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  Page
		bad   string // the parameter refused
	}{
		{"", Page{Limit: DefaultLimit}, ""},
		{"limit=1", Page{Limit: 1}, ""},
		{"limit=100&cursor=NDI", Page{Limit: 100, After: "42"}, ""},
		{"limit=0", Page{}, "limit"},
		{"limit=101", Page{}, "limit"},
		{"limit=", Page{}, "limit"},
		{"limit=-1", Page{}, "limit"},
		{"limit=ten", Page{}, "limit"},
		{"limit=1&limit=2", Page{}, "limit"},
		{"cursor=", Page{}, "cursor"},
		{"cursor=***", Page{}, "cursor"},
		{"cursor=%%%", Page{}, "cursor"},
		{"cursor=NDJ", Page{}, "cursor"}, // not as Quire encodes "42"
		{"cursor=NDI&cursor=NDI", Page{}, "cursor"},
	} {
		got, err := ParsePage(httptest.NewRequest("GET", "/users?"+tc.query, nil))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParsePage(%q) (-want +got):\n%s", tc.query, diff)
		}
		if diff := cmp.Diff(paramFields(tc.bad), fieldsOf(err)); diff != "" {
			t.Errorf("ParsePage(%q) = %v; errors (-want +got):\n%s", tc.query, err, diff)
		}
	}
}

// ParseIDPage takes the cursors of ids as SetNext writes them, and refuses
// any other.
func TestParseIDPage(t *testing.T) {
	for cursor, want := range map[string]quire.ID{
		"NDI": 42, "OTAwNzE5OTI1NDc0MDk5MQ": quire.MaxID,
		"MA": 0, "MDQy": 0, "LTE": 0, "OTAwNzE5OTI1NDc0MDk5Mg": 0, "YWJj": 0, // 0, 042, -1, MaxID+1, abc
	} {
		r := httptest.NewRequest("GET", "/orders?cursor="+cursor, nil)
		_, got, err := ParseIDPage(r)
		if got != want || (err == nil) != (want != 0) {
			t.Errorf("ParseIDPage(cursor=%s) = %d, %v; want %d", cursor, got, err, want)
		}
	}
}

// paramFields is the errors list of a problem that refuses the query
// parameter name, or none when name is "".
func paramFields(name string) []string {
	if name == "" {
		return nil
	}
	return []string{"/" + name}
}

// fieldsOf returns the pointers err's problem lists.
func fieldsOf(err error) []string {
	e, _ := errors.AsType[*quire.Error](err)
	if e == nil {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Pointer)
	}
	if out == nil {
		out = []string{} // an error that names nothing
	}
	return out
}

// TestURLAndNext: links name API Gateway's domain name, whatever host the
// client's headers name.
func TestURLAndNext(t *testing.T) {
	r, err := (&core.RequestAccessor{}).EventToRequestWithContext(t.Context(), events.APIGatewayProxyRequest{
		HTTPMethod: "GET", Path: "/users", QueryStringParameters: map[string]string{"limit": "2"},
		MultiValueHeaders: map[string][]string{"Host": {"evil.example"}, "X-Forwarded-Host": {"evil.example"}, "Forwarded": {"host=evil.example"}},
		RequestContext: events.APIGatewayProxyRequestContext{
			Path: "/prod/users", DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	SetNext(rec, r, "42")
	want := `<https://abc.execute-api.eu-west-1.amazonaws.com/prod/users?cursor=NDI&limit=2>; rel="next"`
	if got := rec.Header().Get("Link"); got != want {
		t.Errorf("Link = %s\nwant   %s", got, want)
	}
	local := httptest.NewRequest("GET", "http://localhost:8080/users", nil)
	local.Header.Set("X-Forwarded-Proto", "http")
	if got := URL(local, "/users/7"); got != "http://localhost:8080/users/7" {
		t.Errorf("URL = %s", got)
	}
}

// proxyRequest builds the request the proxy adapter makes of an API Gateway
// event whose authorizer context is authorizer.
func proxyRequest(t *testing.T, method, path string, authorizer map[string]any) *http.Request {
	t.Helper()
	r, err := (&core.RequestAccessor{}).EventToRequestWithContext(t.Context(), events.APIGatewayProxyRequest{
		HTTPMethod: method, Path: path,
		RequestContext: events.APIGatewayProxyRequestContext{Authorizer: authorizer},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func caller(id, role string, expires time.Time) map[string]any {
	return map[string]any{"principalId": id, ContextUserID: id, ContextRole: role, ContextExpires: strconv.FormatInt(expires.Unix(), 10)}
}

func usersRouter(t *testing.T) http.Handler {
	t.Helper()
	ok := func(w http.ResponseWriter, r *Request) error {
		c := r.Caller
		return JSON(w, r, 200, map[string]string{"id": r.PathValue("id"), "caller": c.ID.String(), "role": string(c.Role)})
	}
	hs := Handlers{}
	for _, rt := range routes.ForGroup(routes.GroupUsers) {
		hs[rt.Resource().Key()] = ok
	}
	hs["DELETE /users/{id}"] = func(http.ResponseWriter, *Request) error { panic("boom") }
	h, err := NewRouter(routes.GroupUsers, hs, noRecords{}, &access.Callers{Accounts: testAccounts})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// accounts are stored accounts by id, for the router to read.
type accounts map[quire.ID]access.Account

func (as accounts) Standing(_ context.Context, id quire.ID) (access.Account, error) {
	a, ok := as[id]
	if !ok {
		return access.Account{}, quire.NotFound("user " + id.String())
	}
	return a, nil
}

// testAccounts: 7 a customer, 1 an admin, 2 a closed admin, 3 an admin
// demoted since its login; 9 has none (deleted).
var testAccounts = accounts{
	7: {Role: quire.RoleCustomer}, 1: {Role: quire.RoleAdmin},
	2: {Role: quire.RoleAdmin, Closed: true}, 3: {Role: quire.RoleCustomer},
}

func TestRouter(t *testing.T) {
	h := usersRouter(t)
	customer := caller("7", "customer", time.Now().Add(time.Minute))
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/users/7", 200, ""},
		{"HEAD", "/users/7", 200, ""},
		{"PATCH", "/users/7", 405, "DELETE, GET, HEAD, OPTIONS, PUT"},
		{"DELETE", "/users", 405, "GET, HEAD, OPTIONS, POST"},
		{"GET", "/health", 404, ""},
		{"GET", "/users/7/x", 404, ""},
		{"DELETE", "/users/7", 500, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, proxyRequest(t, tc.method, tc.path, customer))
		if rec.Code != tc.status || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d Allow %q; want %d Allow %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.status, tc.allow)
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != ProblemMediaType {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, rec.Header().Get("Content-Type"))
		}
	}
	if _, err := NewRouter("users", Handlers{"GET /users": func(http.ResponseWriter, *Request) error { return nil }}, noRecords{}, &access.Callers{Accounts: testAccounts}); err == nil {
		t.Error("NewRouter accepted a group with routes missing")
	}
}

// TestRouterRefusesUnreadBodies: a route that reads no body refuses one,
// before its handler runs; a route that reads one gets it.
func TestRouterRefusesUnreadBodies(t *testing.T) {
	var ran []string
	hs := Handlers{}
	for _, rt := range routes.ForGroup(routes.GroupUsers) {
		hs[rt.Resource().Key()] = func(w http.ResponseWriter, r *Request) error {
			ran = append(ran, rt.Resource().Key())
			return JSON(w, r, 200, struct{}{})
		}
	}
	h, err := NewRouter(routes.GroupUsers, hs, noRecords{}, &access.Callers{Accounts: testAccounts})
	if err != nil {
		t.Fatal(err)
	}
	admin := caller("1", "admin", time.Now().Add(time.Minute))
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/users/7/close", `{"total":0.01}`, 400},
		{"POST", "/users/7/close", "", 200},
		{"GET", "/api/v2/users/7", " ", 400},
		{"GET", "/users", "{}", 400},
		{"HEAD", "/users/7", "{}", 400},
		{"GET", "/users", "", 200},
		{"PUT", "/users/7", "{}", 200},
		{"POST", "/users/7/deposit", `{"amount":1}`, 200},
	} {
		ran = nil
		r, err := (&core.RequestAccessor{}).EventToRequestWithContext(t.Context(), events.APIGatewayProxyRequest{
			HTTPMethod: tc.method, Path: tc.path, Body: tc.body,
			RequestContext: events.APIGatewayProxyRequestContext{Authorizer: admin},
		})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.status || (tc.status == 400) != (ran == nil) {
			t.Errorf("%s %s with %q = %d %s, handlers run %v; want %d", tc.method, tc.path, tc.body, rec.Code, rec.Body, ran, tc.status)
		}
		if rec.Code == 400 && (rec.Header().Get("Content-Type") != ProblemMediaType || rec.Header().Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s %s: headers %v", tc.method, tc.path, rec.Header())
		}
	}
}

// TestRouterChecksCaller: a function checks the authorizer context itself,
// so it is safe behind a stack that forgot the authorizer and refuses a
// token that expired while API Gateway kept its decision cached; and it
// reads the caller's account, which decides over the token: a deleted
// account's token is 401, a closed or demoted admin's is a customer's.
func TestRouterChecksCaller(t *testing.T) {
	h := usersRouter(t)
	future, past := time.Now().Add(time.Minute), time.Now().Add(-login.ClockLeeway-time.Second)
	late := time.Now().Add(-login.ClockLeeway / 2) // expired within the leeway the authorizer allows too
	for _, tc := range []struct {
		name, method, path string
		authorizer         map[string]any
		status             int
		body               string
	}{
		{"public route, no context", "POST", "/users", nil, 200, `{"caller":"0","id":"","role":""}`},
		{"no context", "GET", "/users/7", nil, 401, ""},
		{"expired", "GET", "/users/7", caller("7", "customer", past), 401, ""},
		{"expired within the leeway", "GET", "/users/7", caller("7", "customer", late), 200, `{"caller":"7","id":"7","role":"customer"}`},
		{"bad user id", "GET", "/users/7", caller("07", "customer", future), 401, ""},
		{"bad role", "GET", "/users/7", caller("7", "root", future), 401, ""},
		{"no expiry", "GET", "/users/7", map[string]any{ContextUserID: "7", ContextRole: "customer"}, 401, ""},
		{"customer", "GET", "/users/7", caller("7", "customer", future), 200, `{"caller":"7","id":"7","role":"customer"}`},
		{"customer on an admin route", "GET", "/admin/users", caller("7", "customer", future), 403, ""},
		{"admin", "GET", "/admin/users", caller("1", "admin", future), 200, `{"caller":"1","id":"","role":"admin"}`},
		{"deleted", "GET", "/users/9", caller("9", "customer", future), 401, ""},
		{"deleted admin", "GET", "/admin/users", caller("9", "admin", future), 401, ""},
		{"closed admin on an admin route", "GET", "/admin/users", caller("2", "admin", future), 403, ""},
		{"closed admin", "GET", "/users/5", caller("2", "admin", future), 200, `{"caller":"2","id":"5","role":"customer"}`},
		{"demoted admin on an admin route", "GET", "/admin/users", caller("3", "admin", future), 403, ""},
		{"demoted admin", "GET", "/users/5", caller("3", "admin", future), 200, `{"caller":"3","id":"5","role":"customer"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r := proxyRequest(t, tc.method, tc.path, tc.authorizer)
			r.Header.Set("Authorization", "Bearer x")
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, rec.Code, rec.Body, tc.status)
			}
			if tc.body != "" && rec.Body.String() != tc.body {
				t.Errorf("body %s, want %s", rec.Body, tc.body)
			}
			if tc.status == 401 && rec.Header().Get("WWW-Authenticate") != BearerChallenge {
				t.Errorf("WWW-Authenticate = %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestChallenge: without a token RFC 6750 asks for no error code.
func TestChallenge(t *testing.T) {
	rec := httptest.NewRecorder()
	Error(rec, httptest.NewRequest("POST", "/login", nil), quire.Errorf(quire.EUNAUTHORIZED, "no"))
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="quire"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
}

func FuzzParsePage(f *testing.F) {
	for _, q := range []string{"", "limit=5", "limit=101", "cursor=NDI", "cursor=%ZZ", "limit=1&limit=2"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/users", nil)
		r.URL.RawQuery = query
		p, err := ParsePage(r)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("ParsePage(%q): code %s", query, quire.ErrorCode(err))
			}
			return
		}
		if p.Limit < 1 || p.Limit > MaxLimit {
			t.Fatalf("ParsePage(%q) = %+v", query, p)
		}
	})
}

// noRecords is an idempotency store that has no records.
type noRecords struct{}

func (noRecords) Get(context.Context, string) (*idempotency.Record, error) { return nil, nil }

func (noRecords) Begin(scope, fingerprint string) *idempotency.Pending {
	return &idempotency.Pending{Scope: scope, Fingerprint: fingerprint}
}

// ReadJSON keeps a body as sent, so two names that differ only in case are
// two members; an exact duplicate or invalid UTF-8 is refused, naming it.
func TestReadJSON(t *testing.T) {
	for body, want := range map[string]*quire.FieldError{
		`{"color":"red","Color":"blue"}`:   nil,
		`{"a":{"b":1,"b":2}}`:              {Pointer: "/a/b", Detail: "appears twice in its object"},
		"{\"a\":[\"x\",\"\xff\"]}":         {Pointer: "/a/1", Detail: "is not valid UTF-8"},
		"{\"a\":{\"\xff\":1}}":             {Pointer: "/a", Detail: "has a member name that is not valid UTF-8"},
		`{"a":"\udfff"}`:                   {Pointer: "/a", Detail: "is not valid UTF-8"},
		`{"list":[{"k":1},{"k":2}],"k":3}`: nil,
	} {
		r := httptest.NewRequest("PUT", "/x", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		got, err := ReadJSON(r, 1<<10)
		if want == nil {
			if err != nil || string(got) != body {
				t.Errorf("ReadJSON(%q) = %q, %v; want it as sent", body, got, err)
			}
			continue
		}
		e, _ := errors.AsType[*quire.Error](err)
		if e == nil || e.Code != quire.EINVALID || len(e.Fields) != 1 || e.Fields[0] != *want {
			t.Errorf("ReadJSON(%q) = %v; want %+v", body, err, *want)
		}
	}
}
