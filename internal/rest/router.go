package rest

import (
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// HandlerFunc serves one route. An error it returns becomes the response, by
// Error; it must not have written anything before returning one. A write
// renders its answer into r (see Request.Render), whose idempotency record
// commits with it; the router sends that answer once h returned nil.
type HandlerFunc func(w http.ResponseWriter, r *Request) error

// Handlers maps route keys ("GET /users/{id}", without a version prefix) to
// their handlers.
type Handlers map[string]HandlerFunc

// NewRouter returns the handler of one resource group, routed by the route
// table: each of the group's routes goes to its handler, any other method on
// a path the group serves is 405 with Allow, and any other path is 404. It
// returns an error when a route of the group has no handler or a handler has
// no route, a route takes idempotency keys and records is nil, or a route
// is protected and callers, which read its callers' accounts, is nil, so a
// function fails at init rather than on a request.
func NewRouter(group string, hs Handlers, records idempotency.Store, callers *access.Callers) (http.Handler, error) {
	rt := &router{routes: map[string]http.Handler{}, paths: map[string]http.Handler{}}
	served := map[string]bool{}
	for _, r := range routes.ForGroup(group) {
		key := r.Resource().Key()
		h, ok := hs[key]
		if !ok {
			return nil, fmt.Errorf("rest: group %s has no handler for %s", group, key)
		}
		if r.Idempotency != routes.KeyNone {
			if records == nil {
				return nil, fmt.Errorf("rest: %s takes idempotency keys, and group %s has no record store", key, group)
			}
			h = keyed(r, records, h)
		}
		if r.Access != routes.Public && callers == nil {
			return nil, fmt.Errorf("rest: %s is protected, and group %s reads no accounts", key, group)
		}
		served[key] = true
		rt.routes[r.Key()] = route(r, h, callers)
		rt.paths[r.Path] = nil
	}
	for key := range hs {
		if !served[key] {
			return nil, fmt.Errorf("rest: group %s has a handler for %s, which is not its route", group, key)
		}
	}
	for _, p := range routes.Paths() {
		if _, ok := rt.paths[p]; ok || routes.Owner(p) == group {
			rt.paths[p] = route(routes.Route{Path: p, Access: routes.Public}, nil, nil)
		}
	}
	return rt, nil
}

// router dispatches a group's requests by the route table's own matching
// (routes.Match, as API Gateway matches them), which sets the request's
// path values. It is built at init in a few microseconds, where
// http.ServeMux's pattern checks cost a cold start a quarter of a
// millisecond.
type router struct {
	routes map[string]http.Handler // by route key, "GET /users/{id}"
	paths  map[string]http.Handler // by path: the 405 of a method the path has no route for
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// No answer of the API is to be read as anything but its Content-Type.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	template, params, ok := routes.Match(r.URL.Path)
	path, served := rt.paths[template]
	if !ok || !served {
		Error(w, r, quire.Errorf(quire.ENOTFOUND, "No resource at this path."))
		return
	}
	for k, v := range params {
		r.SetPathValue(k, v)
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // route answers HEAD with its GET
	}
	if h, ok := rt.routes[method+" "+template]; ok {
		h.ServeHTTP(w, r)
		return
	}
	path.ServeHTTP(w, r)
}

func keyed(rt routes.Route, records idempotency.Store, h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *Request) error {
		return idempotent(w, r, rt, records, h)
	}
}

// route serves one route with h after checking its caller may call it and,
// for a versioned route, choosing the representation by path and Accept:
// HEAD on a GET route is the GET without its body (see head), any method
// the path does not allow is 405, and a panic is an internal error rather
// than a crashed function.
func route(rt routes.Route, h HandlerFunc, callers *access.Callers) http.Handler {
	allow := routes.Allow(rt.Path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				Error(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		if r.Method == http.MethodHead && rt.Method == http.MethodGet && h != nil {
			head(w, func(w http.ResponseWriter) { serve(w, r, rt, h, callers) })
			return
		}
		if h == nil || r.Method != rt.Method || !slices.Contains(allow, r.Method) {
			MethodNotAllowed(w, r, allow)
			return
		}
		serve(w, r, rt, h, callers)
	})
}

// serve runs h for r once the method is rt's, and r is of a caller rt
// allows as callers decide it, in a version it has, without a body unless
// rt reads one.
func serve(w http.ResponseWriter, hr *http.Request, rt routes.Route, h HandlerFunc, callers *access.Callers) {
	r := &Request{Request: hr, Version: routes.Versions[0], MediaType: MediaTypeJSON}
	var err error
	if rt.Access != routes.Public {
		r.Caller, err = authorize(hr, rt, callers, time.Now())
	}
	if err == nil && rt.Versioned {
		w.Header().Add("Vary", "Accept")
		err = negotiate(w, r, rt.Version)
	}
	if err == nil && !rt.Body {
		err = noBody(hr, rt)
	}
	if err == nil {
		err = h(w, r)
	}
	switch {
	case err != nil:
		Error(w, hr, err)
	case r.resp.Status != 0:
		Write(w, r.resp)
	}
}

// noBody is EINVALID when r, a request of rt, a route that reads no body,
// has one: what the route would ignore (a total sent to POST /pay) is
// refused rather than taken as said.
func noBody(r *http.Request, rt routes.Route) error {
	if n, _ := io.ReadFull(r.Body, make([]byte, 1)); n == 0 {
		return nil
	}
	return quire.Errorf(quire.EINVALID, "%s %s takes no request body; send it without one.", rt.Method, rt.Resource().Path)
}

// head answers a HEAD request with what get writes, but for the body: the
// status and every header, Content-Length included, as a GET would get
// them, conditional requests honoured (RFC 9110 section 9.3.2).
func head(w http.ResponseWriter, get func(http.ResponseWriter)) {
	rec := &headRecorder{header: w.Header()}
	get(rec)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status != http.StatusNotModified && rec.status != http.StatusNoContent {
		w.Header().Set("Content-Length", strconv.Itoa(rec.n))
	}
	w.WriteHeader(rec.status)
}

// headRecorder counts a body instead of sending it, and keeps the status.
type headRecorder struct {
	header http.Header
	status int
	n      int
}

func (h *headRecorder) Header() http.Header { return h.header }

func (h *headRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *headRecorder) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	h.n += len(b)
	return len(b), nil
}

// Write sends resp.
func Write(w http.ResponseWriter, resp idempotency.Response) {
	for name, vs := range resp.Header {
		w.Header()[name] = vs
	}
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "no-store") // see Shared
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// The keys of the authorizer context, which the authorizer fills and API
// Gateway passes to functions in requestContext.authorizer.
const (
	ContextUserID  = "user_id"
	ContextRole    = "role"
	ContextExpires = "expires" // Unix seconds
	ContextSession = "session_id"
)

// authorize returns the caller of r, a request on the protected route rt,
// as callers decide it. API Gateway's authorizer has
// decided on the token already; deciding again here, on the account,
// refuses a token whose account was deleted, closed or demoted since its
// login, and keeps a function safe from a stack that forgot to attach the
// authorizer.
func authorize(r *http.Request, rt routes.Route, callers *access.Callers, now time.Time) (access.Caller, error) {
	c, err := authorizerCaller(r)
	if err != nil {
		return c, &quire.Error{Code: quire.EUNAUTHORIZED, Message: "This route needs a valid bearer token.", Err: err}
	}
	return callers.Decide(r.Context(), c, rt, now, login.ClockLeeway)
}

// authorizerCaller reads the caller from the authorizer context API Gateway
// puts in the request context.
func authorizerCaller(r *http.Request) (access.Caller, error) {
	rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil {
		return access.Caller{}, fmt.Errorf("no authorizer context")
	}
	get := func(k string) string {
		switch v := rc.Authorizer[k].(type) {
		case string:
			return v
		case nil:
			return ""
		default:
			return fmt.Sprint(v)
		}
	}
	id, err := quire.ParseID(get(ContextUserID))
	if err != nil {
		return access.Caller{}, fmt.Errorf("authorizer context: user id %q", get(ContextUserID))
	}
	role := quire.Role(get(ContextRole))
	if !role.Valid() {
		return access.Caller{}, fmt.Errorf("authorizer context: role %q", role)
	}
	exp, err := strconv.ParseInt(get(ContextExpires), 10, 64)
	if err != nil {
		return access.Caller{}, fmt.Errorf("authorizer context: expires %q", get(ContextExpires))
	}
	return access.Caller{ID: id, Role: role, Expires: time.Unix(exp, 0), SessionID: get(ContextSession)}, nil
}

// BearerChallenge is the WWW-Authenticate value of a 401 for a request that
// carried a token (RFC 6750 section 3.1). API Gateway's UNAUTHORIZED
// response sends it whether or not a token came, as its headers are fixed.
const BearerChallenge = `Bearer realm="quire", error="invalid_token"`

// challenge returns the WWW-Authenticate value of a 401 for r: without a
// token, RFC 6750 asks for no error code.
func challenge(r *http.Request) string {
	if r.Header.Get("Authorization") == "" {
		return `Bearer realm="quire"`
	}
	return BearerChallenge
}
