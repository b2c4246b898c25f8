package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// A Request is a request as the router hands it to its route's handler,
// with what the router decided of it: its caller, its version and media
// type, and, on a route that takes idempotency keys, its key's record
// being read. A write renders its answer with Render or Created before it
// commits, so that the answer's idempotency record commits in the write's
// transaction; the router sends the answer kept once the handler returned
// nil. A read answers with JSON.
type Request struct {
	*http.Request
	// Caller is the caller of a protected route, as the router decided it
	// (see access.Callers.Decide); the zero Caller on a public route.
	Caller access.Caller
	// Version is the API version of the representation asked for: the one
	// the path names, or the one Accept chose; the oldest version outside
	// the versioned routes.
	Version int
	// MediaType is the media type of the representation, the answer's
	// Content-Type.
	MediaType string
	prefix    string               // the version prefix of the request's path, or ""
	resource  bool                 // a versioned route: a representation of a resource
	pending   *idempotency.Pending // of the request's key; nil without one
	resp      idempotency.Response // the answer kept
}

// render renders v as the JSON answer to r with status.
func (r *Request) render(status int, v any) (idempotency.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return idempotency.Response{}, fmt.Errorf("marshal response: %w", err)
	}
	h := http.Header{}
	h.Set("Content-Type", r.MediaType)
	return idempotency.Response{Status: status, Header: h, Body: body}, nil
}

// Render keeps v, with status, as the answer, and returns its idempotency
// record, or nil when the request has no idempotency key. It returns
// idempotency.ErrRaced when the key has an answer already, which the route
// then sends again.
func (r *Request) Render(status int, v any) (*idempotency.Record, error) {
	resp, err := r.render(status, v)
	if err != nil {
		return nil, err
	}
	r.resp = resp
	if r.pending == nil {
		return nil, nil
	}
	return r.pending.Answer(resp)
}

// Created is Render of the 201 answer for the new resource at path (a path
// of the API without a version prefix, such as /users/42), with its
// Location.
func (r *Request) Created(path string, v any) (*idempotency.Record, error) {
	rec, err := r.Render(http.StatusCreated, v)
	if err == nil {
		http.Header(r.resp.Header).Set("Location", r.Location(path))
	}
	return rec, err
}

// Location returns the absolute URL of path (a path of the API without a
// version prefix) for a Location header: under the request's version
// prefix when its path has one.
func (r *Request) Location(path string) string { return URL(r.Request, r.prefix+path) }

// Path returns the path a client uses for path (a path of the API without
// a version prefix, such as /users/42) in links of the answer: with the
// stage prefix of API Gateway's default endpoint, and the version prefix
// when the request's own path has one.
func (r *Request) Path(path string) string { return basePath(r.Request) + r.prefix + path }

// ETag returns the strong entity tag of the representation of content
// whose hash is hash, in the request's API version, gzip-compressed or
// not.
func (r *Request) ETag(hash string, gzip bool) string { return Tag(hash, r.Version, gzip) }

// The bounds of what a request carries that answers echo (a problem's
// instance, Location, links) or that the functions read (If-Match,
// If-None-Match, Accept-Encoding): a regional REST API, as the stack's,
// takes no URL over 10240 characters and no request whose line and
// header values pass 10240 bytes together (API Gateway's quotas). The
// local gateway refuses a longer URL, or a host longer than a DNS name
// with a port, and the functions a longer header they read (400).
const (
	MaxURLLen    = 10240               // a request's path and query, as sent
	MaxHostLen   = 253 + len(":65535") // a request's host: a DNS name and a port
	MaxHeaderLen = 10240               // a header's value, in bytes
)

// headerValue returns the value of r's header name, its lines joined
// with commas: EINVALID when it is over MaxHeaderLen bytes.
func headerValue(r *http.Request, name string) (string, error) {
	v := strings.Join(r.Header.Values(name), ",")
	if len(v) > MaxHeaderLen {
		return "", quire.Errorf(quire.EINVALID, "The %s header is over %d bytes.", name, MaxHeaderLen)
	}
	return v, nil
}

// URL returns the absolute URL a client uses for path (a path of the API,
// such as /users/42): the scheme the client used (X-Forwarded-Proto, which
// API Gateway and the local gateway set), r.Host, and the base path the
// client's path had (see basePath). The Lambda adapter takes r.Host from
// the event's requestContext.domainName, never from a header: deployed,
// API Gateway's domain name; locally, the Host the local gateway checked
// against the hosts it serves.
func URL(r *http.Request, path string) string {
	scheme := "https"
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host + basePath(r) + path
}

// basePath is what comes before the API's own path (the route API Gateway
// matched) in the path the client sent: "/prod" on API Gateway's default
// endpoint, the mapping's base path on a custom domain ("/shop" for a
// mapping of api.example.com/shop), "" on a custom domain mapped to the
// root or on the local gateway without BASE_PATH.
func basePath(r *http.Request) string {
	rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
	if !ok {
		return ""
	}
	// API Gateway serves a path with a trailing slash as the one without
	// (and the root, "/", as the base path alone).
	sent := strings.TrimSuffix(rc.Path, "/")
	prefix, found := strings.CutSuffix(sent, strings.TrimSuffix(r.URL.Path, "/"))
	if !found || strings.ContainsAny(prefix, "?#") {
		return ""
	}
	return (&url.URL{Path: prefix}).EscapedPath()
}
