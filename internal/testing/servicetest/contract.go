package servicetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/quireapi/quire/internal/openapi"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// checker is the OpenAPI document of every route (openapi.Contract), with
// a router that finds its operations and the bodies it found valid.
type checker struct {
	doc    *openapi3.T
	router routers.Router
	valid  sync.Map // of validBody: the bodies found valid
	ajv    *ajv     // the same document in ajv, where Node runs
}

var (
	checkersMu sync.Mutex
	checkers   = map[string]*checker{} // by the retirements they were built with
)

// contract returns the checker of the contract as the versions'
// retirements are now: built once for each set of them that a test
// declares.
func contract() (*checker, error) {
	key := fmt.Sprint(routes.Retirements)
	checkersMu.Lock()
	defer checkersMu.Unlock()
	if c, ok := checkers[key]; ok {
		return c, nil
	}
	b, err := openapi.Contract()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, err
	}
	// The document's server is relative to wherever it is served: requests
	// are matched by their path alone.
	doc.Servers = nil
	// The docs page's files are text, which the checker reads as such.
	for _, media := range []string{"text/html", "text/javascript", "text/css"} {
		openapi3filter.RegisterBodyDecoder(media, openapi3filter.PlainBodyDecoder)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	a, err := startAjv(b)
	if err != nil {
		return nil, err
	}
	checkers[key] = &checker{doc: doc, router: router, ajv: a}
	return checkers[key], nil
}

// CheckContract returns why the response to req (status, header, body)
// does not match the OpenAPI document, or nil. A response to a method or
// path the document does not have (404 or 405) must still be a problem. A
// 4xx must be one the operation lists, not one its default response
// covers. A problem carries Retry-After exactly when its type is retryable, as the
// document says in words (rest.Retryable). A
// gzip-encoded body is checked as the client reads it, uncompressed; a 304
// is not checked (it has no body, and kin-openapi skips it).
func CheckContract(req *http.Request, status int, header http.Header, body []byte) error {
	c, err := contract()
	if err != nil {
		return err
	}
	r := c.router
	if strings.EqualFold(header.Get("Content-Encoding"), "gzip") && len(body) > 0 { // none: an answer to HEAD
		if body, err = gunzip(body); err != nil {
			return fmt.Errorf("%s %s answered Content-Encoding: gzip: %w", req.Method, req.URL.Path, err)
		}
	}
	switch req.Method {
	case http.MethodOptions:
		return nil // Allow and CORS preflights, which the document describes once, not per operation
	case http.MethodHead:
		// A GET's answer without its body: the GET's status and headers.
		get := req.Clone(req.Context())
		get.Method = http.MethodGet
		if _, _, err := r.FindRoute(get); err != nil && status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			return fmt.Errorf("HEAD %s answered %d but GET is no operation of the document", req.URL.Path, status)
		}
		if len(body) > 0 {
			return fmt.Errorf("HEAD %s answered a body of %d bytes", req.URL.Path, len(body))
		}
		return nil
	}
	route, params, err := r.FindRoute(req)
	if err != nil {
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s %s answered %d but is no operation of the document", req.Method, req.URL.Path, status)
		}
		if err := checkProblem(header, body); err != nil {
			return err
		}
		return checkRetryAfter(header, body)
	}
	if err := checkRequest(req, route, params, status, header, body); err != nil {
		return err
	}
	if status >= 400 && status < 500 && route.Operation.Responses.Status(status) == nil {
		return fmt.Errorf("%s %s answered %d, which the operation does not list", req.Method, route.Path, status)
	}
	// A body the operation answered with this status and media type before
	// was valid then, and is now: kin-openapi compiles the schema again at
	// every check, most of a check's CPU. Its headers are checked every time.
	seen := validBody{route.Method, route.Path, status, header.Get("Content-Type"), sha256.Sum256(body)}
	_, known := c.valid.Load(seen)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   known,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	if mt := strings.TrimSpace(strings.Split(header.Get("Content-Type"), ";")[0]); !known && len(body) > 0 && strings.HasSuffix(mt, "json") {
		if err := c.ajv.check(responseSchema(route.Operation, status, mt), body); err != nil {
			return fmt.Errorf("%s %s answered %d: %w", req.Method, route.Path, status, err)
		}
	}
	c.valid.Store(seen, true)
	return checkRetryAfter(header, body)
}

// responseSchema returns the schema of op's answer of status in the media
// type mediaType, which kin-openapi found the body valid against.
func responseSchema(op *openapi3.Operation, status int, mediaType string) *openapi3.SchemaRef {
	r := op.Responses.Status(status)
	if r == nil {
		r = op.Responses.Default()
	}
	if r == nil || r.Value == nil {
		return nil
	}
	mt := r.Value.Content.Get(mediaType)
	if mt == nil {
		return nil
	}
	return mt.Schema
}

// validBody is a body an operation answered with a status and a media
// type, which the document allows, by its hash: the bodies themselves
// would stay in memory, which tests of the heap would count.
type validBody struct {
	method, path string
	status       int
	mediaType    string
	body         [sha256.Size]byte
}

// checkRetryAfter checks that a problem carries Retry-After when the same
// request can get past it, and only then: a client that sees Retry-After
// retries, and one that does not, does not.
func checkRetryAfter(header http.Header, body []byte) error {
	if header.Get("Content-Type") != rest.ProblemMediaType || len(body) == 0 { // no body: an answer to HEAD
		return nil
	}
	var p rest.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("a problem that is not JSON: %w", err)
	}
	code := strings.TrimPrefix(p.Type, rest.ProblemTypeBase)
	if retry := header.Get("Retry-After"); (retry != "") != rest.Retryable(code) {
		return fmt.Errorf("a problem of type %s with Retry-After %q: only a retryable problem has one, and each has one", p.Type, retry)
	}
	return nil
}

// checkProblem checks a body against the document's Problem schema.
func checkProblem(header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); ct != rest.ProblemMediaType {
		return fmt.Errorf("an error answered %s, not a problem", ct)
	}
	c, err := contract()
	if err != nil {
		return err
	}
	doc := c.doc
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return doc.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

func gunzip(body []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// checkRequest holds the document's requests to the server's: a request
// the server refuses as invalid (400, a problem of type invalid) is one the
// document refuses too, and a request it accepts (2xx) one the document
// accepts, but for the rules of looser.
func checkRequest(req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) error {
	r := req.Clone(context.Background())
	switch {
	case req.GetBody != nil: // a request that was sent: a copy of its body
		var err error
		if r.Body, err = req.GetBody(); err != nil {
			return err
		}
	case req.Body != nil: // one that was not: its body, kept for the caller
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return err
		}
		req.Body, r.Body = io.NopCloser(bytes.NewReader(b)), io.NopCloser(bytes.NewReader(b))
	}
	refused := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route,
		// readOnly members are annotations (JSON Schema 2020-12): a write
		// ignores them, so that a representation read can be sent back.
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true,
			ExcludeReadOnlyValidations: true},
	})
	var p rest.Problem
	invalid := status == http.StatusBadRequest && header.Get("Content-Type") == rest.ProblemMediaType &&
		json.Unmarshal(body, &p) == nil && p.Type == rest.ProblemType(quire.EINVALID)
	switch {
	case invalid && refused == nil && !inWords(looser, r, route, p):
		return fmt.Errorf("%s %s: the server refuses as invalid a request the document calls valid: %s %v", req.Method, route.Path, p.Detail, p.Errors)
	case status >= 200 && status < 300 && refused != nil && !inWords(stricter, r, route, p):
		return fmt.Errorf("%s %s: the document refuses a request the server accepts: %v", req.Method, route.Path, refused)
	}
	return nil
}

// A rule is one the documents say in words, where OpenAPI 3.1 has no way
// to say it: the description of an operation, a parameter or a field says
// it. applies reports whether a request meets it, with the problem the
// server answered (none, for stricter).
type rule struct {
	what    string
	applies func(r *http.Request, route *routers.Route, p rest.Problem) bool
}

// looser are the server's refusals that the documents say in words alone.
var looser = []rule{
	{"a body sent to an operation that takes none (each says it takes none: OpenAPI describes bodies, not their absence)",
		func(r *http.Request, route *routers.Route, _ rest.Problem) bool {
			return route.Operation.RequestBody == nil && r.ContentLength != 0
		}},
	{"a query parameter sent twice, or one the operation does not take (OpenAPI names the parameters there are)",
		func(r *http.Request, route *routers.Route, _ rest.Problem) bool {
			for name, values := range r.URL.Query() {
				if len(values) > 1 || route.Operation.Parameters.GetByInAndName("query", name) == nil {
					return true
				}
			}
			return false
		}},
	{"Idempotency-Key and X-Idempotency-Key with different values (a rule across two headers)",
		func(r *http.Request, _ *routers.Route, _ rest.Problem) bool {
			k, x := r.Header.Get("Idempotency-Key"), r.Header.Get("X-Idempotency-Key")
			return k != "" && x != "" && k != x
		}},
	{"JSON that is not I-JSON (RFC 7493): a member twice in one object, a string that is not UTF-8, more after the value " +
		"(JSON Schema sees the value a parser made, not the text)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return strings.HasPrefix(p.Detail, "The request body is not valid JSON") ||
				problemSays(p, "", "appears twice in its object", "is not valid UTF-8", "has a member name that is not valid UTF-8")
		}},
	{"an amount with more than two decimals, or in exponent notation (JSON Schema sees the number, not how it is " +
		"written, and stock validators compute its multipleOf in binary floating point, refusing 34.48)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return problemSays(p, "/amount", "must be a decimal number") || problemSays(p, "/price", "must be a decimal number")
		}},
	{"a control, format or invisible character beyond U+FFFF, such as a tag character (a pattern that ECMA-262 compiles " +
		"without flags cannot name it: quire.BeyondThePlane)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			for _, e := range p.Errors {
				var r rune
				if _, err := fmt.Sscanf(e.Detail, "must not contain U+%X, a control", &r); err == nil && r > 0xffff {
					return true
				}
			}
			return false
		}},
	{"an integer (a quantity, an id) written with a fraction or an exponent, 2.0 or 1e1 (JSON Schema's integer is a " +
		"number with no fractional part, however it is written)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return problemSays(p, "", rest.WholeNumber)
		}},
	{"current_password, to change one's own email or password, or to delete one's own account (the rule depends on the caller)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return problemSays(p, "/current_password", "is required to change", "is required to delete one's own account")
		}},
	{"role and status, required when an admin writes a user, ignored when a customer does, and never one's own to change " +
		"(the rule depends on the caller)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return problemSays(p, "/role", "is required", users.NotOwnToChange) || problemSays(p, "/status", "is required", users.NotOwnToChange)
		}},
	{"an author_id no author has, a cursor no page gave (references to what is not there)",
		func(_ *http.Request, _ *routers.Route, p rest.Problem) bool {
			return problemSays(p, "/author_id", "no author has") || problemSays(p, "/cursor", "is not valid")
		}},
}

// stricter are the requests the server takes that the documents refuse.
var stricter = []rule{
	{"X-Idempotency-Key alone where Idempotency-Key is required (the older name, which the server still takes)",
		func(r *http.Request, _ *routers.Route, _ rest.Problem) bool {
			return r.Header.Get("Idempotency-Key") == "" && r.Header.Get("X-Idempotency-Key") != ""
		}},
}

// inWords reports whether one of rules applies to r.
func inWords(rules []rule, r *http.Request, route *routers.Route, p rest.Problem) bool {
	for _, rule := range rules {
		if rule.applies(r, route, p) {
			return true
		}
	}
	return false
}

// problemSays reports whether p lists an error at pointer (any, when "")
// whose detail starts with one of details.
func problemSays(p rest.Problem, pointer string, details ...string) bool {
	for _, e := range p.Errors {
		for _, d := range details {
			if (pointer == "" || e.Pointer == pointer) && strings.Contains(e.Detail, d) {
				return true
			}
		}
	}
	return false
}

// CheckEvent returns why body, an event as a receiver gets it, is not one
// of the webhooks of the OpenAPI document (the one of its dataschema), or nil. It
// holds the event to a closed copy of the schema: the documents let an
// event carry members they do not name, which a consumer ignores, and
// Quire's own events carry none, so that a member added in code and not in
// the documents fails the tests.
func CheckEvent(body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("an event that is not JSON: %w", err)
	}
	ev, _ := v.(map[string]any)
	dataschema, _ := ev["dataschema"].(string)
	schemas, err := EventSchemas()
	if err != nil {
		return err
	}
	s, ok := schemas[dataschema]
	if !ok {
		return fmt.Errorf("the document has no webhook of the dataschema %q: %s", dataschema, body)
	}
	if err := closed(s.Value).VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("the event %s is not its webhook's: %w", body, err)
	}
	c, err := contract()
	if err != nil {
		return err
	}
	return c.ajv.check(s, body)
}

// EventSchemas returns the schema of each version of each event the
// documents' webhooks describe, by its dataschema.
func EventSchemas() (map[string]*openapi3.SchemaRef, error) {
	c, err := contract()
	if err != nil {
		return nil, err
	}
	out := map[string]*openapi3.SchemaRef{}
	for _, hook := range c.doc.Webhooks {
		if hook.Post == nil || hook.Post.RequestBody == nil {
			continue
		}
		s := hook.Post.RequestBody.Value.Content.Get("application/json").Schema
		if p := s.Value.Properties["dataschema"]; p != nil {
			if dataschema, ok := p.Value.Const.(string); ok {
				out[dataschema] = s
			}
		}
	}
	return out, nil
}

// closed returns a copy of s in which every object with properties, s's
// own and those of its members and items, takes no other member.
func closed(s *openapi3.Schema) *openapi3.Schema {
	if s == nil {
		return nil
	}
	c := *s
	if len(s.Properties) > 0 {
		no := false
		c.AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
		c.Properties = openapi3.Schemas{}
		for name, p := range s.Properties {
			c.Properties[name] = &openapi3.SchemaRef{Value: closed(p.Value)}
		}
	}
	if s.Items != nil {
		c.Items = &openapi3.SchemaRef{Value: closed(s.Items.Value)}
	}
	return &c
}
