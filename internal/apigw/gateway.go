package apigw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// MaxRequestBytes is API Gateway's limit on a request body: 10 MB.
const MaxRequestBytes = 10 << 20

// Stage is the stage name the local gateway puts in request contexts.
const Stage = "local"

// Gateway serves the whole API over HTTP the way the deployed REST API does:
// it matches each request against the route table, turns it into the proxy
// event API Gateway would send, calls the function of the route's group and
// writes the function's proxy response back.
type Gateway struct {
	// Functions maps each resource group to its Lambda handler.
	Functions map[string]Handler
	// Authorizer runs before every protected route, as the stack's Lambda
	// authorizer does, and its decisions are cached per Authorization
	// header for AuthorizerTTL, as API Gateway caches them.
	Authorizer    Authorizer
	AuthorizerTTL time.Duration
	// Timeout is each invocation's time, as FunctionTimeout is the
	// deployed functions': a function's context ends after it, and the
	// gateway answers 502, as API Gateway does for a function Lambda
	// stopped. Zero means FunctionTimeout.
	Timeout time.Duration
	// CORS is the stack's cross-origin policy, which the functions apply
	// to their answers and the gateway to its own (401, 403, 404, 413,
	// 502).
	CORS rest.CORS
	// BasePath, when set ("/shop"), serves the API under it, as a custom
	// domain's base path mapping does (api.example.com/shop to the
	// stage): the functions get the client's path, base path included,
	// with the route's resource and parameters, and a path outside it is
	// 404. See ParseBasePath.
	BasePath string
	// Hosts, when set, are the only hosts whose requests the gateway
	// answers, as Hosts returns them (host:port); a request whose Host
	// header names another is 400, since links and the functions' domain
	// name come from it. Empty answers every host.
	Hosts []string

	mu        sync.Mutex
	decisions map[string]decision
}

// ServeHTTP answers a host it does not serve, a host or a URL longer than
// API Gateway takes (rest.MaxHostLen, rest.MaxURLLen) with 400, an unknown path
// with 404, a protected route without a valid token with 401 and one the
// token does not allow with 403, a body over MaxRequestBytes with 413 and a
// failed function with 502, each as problem+json; a known path with a
// method the table does not define goes to the path's owner group, which
// answers 405, as the stack's ANY methods do. A query string that does not
// parse (a % that begins no escape) is 400, and OPTIONS * 404, when the
// server passes it on (see http.Server.DisableGeneralOptionsHandler), in
// problem+json too.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := newRequestID()
	w.Header().Set("X-Amzn-Requestid", requestID)
	g.CORS.Apply(w.Header(), r)      // on the gateway's own errors too, as the stack's gateway responses
	answer := func(p rest.Problem) { // the gateway's own answer, which no function logs
		p.Instance, p.RequestID = r.URL.Path, requestID
		slog.Info("gateway answered", "method", r.Method, "path", r.URL.Path, "status", p.Status, "problem", p.Type, "request_id", requestID)
		rest.WriteProblem(w, p)
	}
	fail := func(code, detail string) { answer(rest.NewProblem(code, detail)) }
	if len(r.Host) > rest.MaxHostLen || len(r.URL.RequestURI()) > rest.MaxURLLen {
		fail(quire.EINVALID, fmt.Sprintf("The URL is too long: API Gateway takes a path and query of at most %d characters, "+
			"and a host is a DNS name with a port.", rest.MaxURLLen))
		return
	}
	if !g.serves(r.Host) {
		fail(quire.EINVALID, "The Host header names a host this server does not answer: use the address it printed, or add the name to ALLOWED_HOSTS.")
		return
	}
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil { // as API Gateway refuses it, before it routes
		fail(quire.EINVALID, "The query string could not be read: "+err.Error()+".")
		return
	}
	path, inBase := strings.CutPrefix(r.URL.Path, g.BasePath)
	if inBase && path == "" {
		path = "/" // the base path alone is the API's root, as on a custom domain
	}
	template, resource, params, ok := Route(path)
	if !inBase || !ok {
		fail(quire.ENOTFOUND, "No resource at this path.")
		return
	}
	group := routes.Owner(template)
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // the GET's function answers HEAD
	}
	for _, rt := range routes.All() {
		if rt.Path == template && rt.Method == method {
			group = rt.Group
		}
	}
	fn, ok := g.Functions[group]
	if !ok {
		fail(quire.EGATEWAY, "The function of this route is not running.")
		return
	}
	var authorizer map[string]any
	if access.Of(template, r.Method) != routes.Public {
		if g.Authorizer == nil {
			fail(quire.EGATEWAY, "The authorizer is not running.")
			return
		}
		var p *rest.Problem
		if authorizer, p = g.authorize(r, path, resource, params, requestID); p != nil {
			if p.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", rest.BearerChallenge)
			}
			answer(*p)
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		fail(quire.ETOOLARGE, "The request body is over 10 MB.")
		return
	}
	ev := Event(r, body, resource, params, requestID)
	ev.RequestContext.Authorizer = authorizer
	start := time.Now()
	resp, err := g.invoke(r.Context(), fn, ev)
	if errors.Is(err, errTimedOut) {
		slog.Error("function timed out", "group", group, "request_id", requestID, "after", time.Since(start))
		fail(quire.EGATEWAY, "The function did not answer in time.")
		return
	}
	if err != nil {
		slog.Error("function failed", "group", group, "request_id", requestID, "err", err)
		fail(quire.EGATEWAY, "The function failed; see its log.")
		return
	}
	if err := writeResponse(w, r.Method, resp); err != nil {
		slog.Error("bad function response", "group", group, "request_id", requestID, "err", err)
		fail(quire.EGATEWAY, "The function returned a malformed response.")
		return
	}
	// The function wrote the request's line; the gateway's own answers
	// above are the ones it logs.
	slog.Debug("invoked", "method", r.Method, "path", r.URL.Path, "status", resp.StatusCode,
		"function", group, "ms", time.Since(start).Milliseconds(), "request_id", requestID)
}

// Route resolves path as API Gateway does: the route table's template,
// the resource API Gateway has for it (every version's routes are one
// tree, /api/{version}/...: see routes.Gateway) and its parameters, the
// version's included. A version the API does not have matches too, as on
// API Gateway, as the same route of the first version (the authorizer runs,
// and the function answers 404). ok is false for a path of no route.
func Route(path string) (template, resource string, params map[string]string, ok bool) {
	version := ""
	if template, params, ok = routes.Match(path); ok {
		_, version = routes.Gateway(template)
	} else {
		after, isAPI := strings.CutPrefix(path, "/api/")
		v, rest, found := strings.Cut(after, "/")
		if !isAPI || !found || v == "" {
			return "", "", nil, false
		}
		template, params, ok = routes.Match(routes.VersionPrefix(routes.Versions[0]) + "/" + rest)
		if _, versioned := routes.Gateway(template); !ok || versioned == "" {
			return "", "", nil, false
		}
		version = v
	}
	resource, _ = routes.Gateway(template)
	if version != "" {
		params[routes.VersionParam] = version
	}
	return template, resource, params, true
}

// ParseBasePath reads a base path as Gateway.BasePath takes it: "" or "/"
// for none, else one or more segments ("/shop", "shop/v1/"), returned with a
// leading slash and no trailing one. It returns an error for a path with an
// empty, "." or ".." segment or a character a URL path would escape.
func ParseBasePath(s string) (string, error) {
	s = strings.Trim(s, "/")
	if s == "" {
		return "", nil
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." || url.PathEscape(seg) != seg {
			return "", fmt.Errorf("base path %q: want segments of letters, digits and -._~ separated by /", s)
		}
	}
	return "/" + s, nil
}

// errTimedOut is an invocation that outlived the gateway's Timeout.
var errTimedOut = errors.New("function timed out")

// invoke calls fn with ev under the invocation deadline Lambda would set,
// and stops waiting for it at that deadline (Lambda would stop the function
// there; here it runs on, its answer discarded).
func (g *Gateway) invoke(ctx context.Context, fn Handler, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	timeout := g.Timeout
	if timeout == 0 {
		timeout = FunctionTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	type result struct {
		resp events.APIGatewayProxyResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := fn(ctx, ev)
		done <- result{resp, err}
	}()
	select {
	case res := <-done:
		return res.resp, res.err
	case <-ctx.Done():
		return events.APIGatewayProxyResponse{}, errTimedOut
	}
}

// Event builds the REST API proxy event (payload 1.0) API Gateway sends for
// r, whose body is body, on the resource template with its path parameters.
// As the stack's API has "*/*" as binary media type, a non-empty body is
// base64-encoded with IsBase64Encoded set, whatever its Content-Type.
func Event(r *http.Request, body []byte, template string, params map[string]string, requestID string) events.APIGatewayProxyRequest {
	headers := r.Header.Clone()
	headers.Set("Host", r.Host)
	ip, port := clientAddr(r)
	headers.Set("X-Forwarded-For", ip)
	headers.Set("X-Forwarded-Proto", "http")
	headers.Set("X-Forwarded-Port", port)
	if headers.Get("X-Amzn-Trace-Id") == "" { // API Gateway starts a trace when the client did not
		headers.Set("X-Amzn-Trace-Id", "Root="+newTraceID(time.Now()))
	}
	ev := events.APIGatewayProxyRequest{
		Resource:          template,
		Path:              r.URL.Path,
		HTTPMethod:        r.Method,
		Headers:           map[string]string{},
		MultiValueHeaders: map[string][]string(headers),
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID:        "000000000000",
			ResourceID:       template,
			Stage:            Stage,
			DomainName:       r.Host,
			RequestID:        requestID,
			Protocol:         r.Proto,
			Identity:         events.APIGatewayRequestIdentity{SourceIP: ip, UserAgent: r.UserAgent()},
			ResourcePath:     template,
			Path:             r.URL.Path,
			HTTPMethod:       r.Method,
			RequestTime:      time.Now().UTC().Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch: time.Now().UnixMilli(),
			APIID:            "local",
		},
	}
	for k, vs := range headers {
		ev.Headers[k] = vs[len(vs)-1] // API Gateway keeps the last value
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		ev.MultiValueQueryStringParameters = map[string][]string(q)
		for k, vs := range q {
			ev.QueryStringParameters[k] = vs[len(vs)-1]
		}
	}
	if len(params) > 0 {
		ev.PathParameters = params
	}
	if len(body) > 0 {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ev
}

func clientAddr(r *http.Request) (ip, port string) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	_, port, err = net.SplitHostPort(r.Host)
	if err != nil {
		port = "80"
	}
	return host, port
}

// writeResponse writes a proxy response: its headers (multi-value ones
// included), its status and its body, decoded when base64.
func writeResponse(w http.ResponseWriter, method string, resp events.APIGatewayProxyResponse) error {
	header, body, err := Response(resp)
	if err != nil {
		return err
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	h := w.Header()
	for k, vs := range header {
		h[k] = vs
	}
	if h.Get("Content-Length") != "" && method != http.MethodHead { // HEAD's is the GET's
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body) // an error here means the client went away
	return nil
}

// Response reads resp, a function's answer, as API Gateway passes it on:
// its headers, a multi-value header over the single value of its name,
// and its body, decoded when base64. It returns an error for a base64 body
// that does not decode.
func Response(resp events.APIGatewayProxyResponse) (http.Header, []byte, error) {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("decode base64 body: %w", err)
		}
		body = b
	}
	h := http.Header{}
	for k, v := range resp.Headers {
		if _, multi := resp.MultiValueHeaders[k]; !multi {
			h.Set(k, v)
		}
	}
	for k, vs := range resp.MultiValueHeaders {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h, body, nil
}

// newRequestID returns a random UUID, as API Gateway's request ids are.
// newTraceID returns an X-Ray trace id: its version, the time in hex
// seconds and 96 random bits.
func newTraceID(now time.Time) string {
	var b [12]byte
	rand.Read(b[:])
	return fmt.Sprintf("1-%08x-%x", now.Unix(), b)
}

func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
