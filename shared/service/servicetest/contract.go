package servicetest

import (
	"bytes"
	"compress/gzip"
	"context"
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

	"github.com/quireapi/quire/shared/openapi"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
)

// checker is the OpenAPI document of every route (openapi.Contract), with
// a router that finds its operations.
type checker struct {
	doc    *openapi3.T
	router routers.Router
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
	checkers[key] = &checker{doc, router}
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
	if status >= 400 && status < 500 && route.Operation.Responses.Status(status) == nil {
		return fmt.Errorf("%s %s answered %d, which the operation does not list", req.Method, route.Path, status)
	}
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
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	return checkRetryAfter(header, body)
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
