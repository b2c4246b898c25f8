// Package pretraffic checks a new version of each function before any
// traffic reaches it: CodeDeploy runs the stack's hook (see Hook) before it
// shifts a function's alias, and the hook invokes the new version with the
// read-only checks of its group (Check). A failed check fails the
// deployment, which rolls back while every caller is still on the old
// version.
package pretraffic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// Authorizer is the group name of the authorizer function, which has
// checks of its own.
const Authorizer = "authorizer"

// Invoke calls a function with payload, as Lambda's Invoke does: it returns
// the function's answer, or an error with the function's error message
// when the function returned an error.
type Invoke func(ctx context.Context, payload []byte) ([]byte, error)

// Nobody is the caller of the checks of protected routes: a customer whom
// no account belongs to. The function reads its account, through its own
// role, finds none, and refuses the token (401), as it refuses a deleted
// account's: so the checks read nobody's data. quire.NewID gives no id
// below 4096 until its milliseconds wrap, in 2094.
const Nobody quire.ID = 4095

// host is the Host of the checks' requests.
const host = "pretraffic.invalid"

// step is one check: a request and what its answer must be.
type step struct {
	method, path string
	caller       bool // sent as Nobody, and refused; else as nobody at all, as a public route is
	status       int
	body         func([]byte) error // nil: no check of the body
}

// checks are each group's read-only checks, in order. Each reads through
// the function what its group reads (a table, the keys), writes nothing,
// and expects what a working version answers whatever the data.
var checks = map[string][]step{
	routes.GroupHealth: {
		{method: "GET", path: "/health", status: 200, body: jsonObject},
		{method: "GET", path: routes.VersionPrefix(routes.Versions[0]) + routes.DocumentPath, status: 200, body: member("openapi")},
	},
	routes.GroupAuth: {
		{method: "GET", path: "/.well-known/jwks.json", status: 200, body: member("keys")},
	},
	routes.GroupCatalog: {
		{method: "GET", path: "/landing", status: 200, body: jsonObject},
		refused("/products"),
	},
	routes.GroupCarts:  {refused("/cart")},
	routes.GroupOrders: {refused("/orders")},
	routes.GroupUsers:  {refused("/users/" + Nobody.String())},
	routes.GroupConfig: {refused("/config")},
}

// refused is the check of a protected route: GET path as Nobody, whose
// account the function reads and does not find.
func refused(path string) step {
	return step{method: "GET", path: path, caller: true, status: http.StatusUnauthorized, body: problem(quire.EUNAUTHORIZED)}
}

// Groups are the groups Check has checks for: every function that the
// stack deploys through CodeDeploy.
func Groups() []string {
	out := []string{Authorizer}
	for _, g := range routes.Groups() {
		out = append(out, g.Name)
	}
	return out
}

// Requests are the requests of group's checks, as "GET /health": what
// docs/deploying.md lists.
func Requests(group string) []string {
	if group == Authorizer {
		return []string{"GET " + authorizerPath}
	}
	var out []string
	for _, s := range checks[group] {
		out = append(out, s.method+" "+s.path)
	}
	return out
}

// Check runs group's checks through invoke, and returns the first failure,
// which names the request and what was wrong. A GET answered with an ETag
// is asked again with If-None-Match, and must then be 304.
func Check(ctx context.Context, group string, invoke Invoke) error {
	if group == Authorizer {
		return checkAuthorizer(ctx, invoke)
	}
	steps, ok := checks[group]
	if !ok {
		return fmt.Errorf("no checks for the function of group %q", group)
	}
	for _, s := range steps {
		resp, err := call(ctx, invoke, s, "")
		if err == nil {
			err = s.check(resp)
		}
		if err == nil && resp.header.Get("ETag") != "" {
			revalidate := step{method: s.method, path: s.path, caller: s.caller, status: http.StatusNotModified, body: empty}
			resp, err = call(ctx, invoke, revalidate, resp.header.Get("ETag"))
			if err == nil {
				err = revalidate.check(resp)
			}
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", s.method, s.path, err)
		}
	}
	return nil
}

// answer is a function's answer with its headers in one map.
type answer struct {
	events.APIGatewayProxyResponse
	header http.Header
	body   []byte
}

// call sends s's request, with If-None-Match when etag is set, as API
// Gateway's event for the route.
func call(ctx context.Context, invoke Invoke, s step, etag string) (answer, error) {
	r, err := http.NewRequestWithContext(ctx, s.method, "https://"+host+s.path, nil)
	if err != nil {
		return answer{}, err
	}
	r.Header.Set("Accept", "application/json")
	if etag != "" {
		r.Header.Set("If-None-Match", etag)
	}
	_, resource, params, ok := apigw.Route(s.path)
	if !ok {
		return answer{}, errors.New("not a path of the route table")
	}
	ev := apigw.Event(r, nil, resource, params, "pretraffic-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if s.caller {
		ev.RequestContext.Authorizer = map[string]any{
			rest.ContextUserID:  Nobody.String(),
			rest.ContextRole:    string(quire.RoleCustomer),
			rest.ContextExpires: strconv.FormatInt(time.Now().Add(5*time.Minute).Unix(), 10),
			rest.ContextSession: "pretraffic",
		}
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return answer{}, err
	}
	out, err := invoke(ctx, payload)
	if err != nil {
		return answer{}, fmt.Errorf("the function failed: %w", err)
	}
	var a answer
	if err := json.Unmarshal(out, &a.APIGatewayProxyResponse); err != nil {
		return answer{}, fmt.Errorf("not an API Gateway proxy response: %w", err)
	}
	if a.IsBase64Encoded {
		return answer{}, errors.New("a base64 body, which a request without Accept-Encoding never gets")
	}
	a.header, a.body, err = apigw.Response(a.APIGatewayProxyResponse)
	return a, err
}

// check holds a against s: its status, nosniff, a media type that fits
// the status, and s's body check.
func (s step) check(a answer) error {
	if a.StatusCode != s.status {
		return fmt.Errorf("status %d, want %d: %.200s", a.StatusCode, s.status, a.body)
	}
	if v := a.header.Get("X-Content-Type-Options"); v != "nosniff" {
		return fmt.Errorf("X-Content-Type-Options %q, want nosniff", v)
	}
	if a.StatusCode != http.StatusNotModified {
		want := "application/json"
		if a.StatusCode >= 400 {
			want = rest.ProblemMediaType
		}
		if mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type")); mt != want && !(want == "application/json" && strings.HasPrefix(mt, "application/vnd.quire.")) {
			return fmt.Errorf("Content-Type %q, want %s", a.header.Get("Content-Type"), want)
		}
	}
	if s.body != nil {
		return s.body(a.body)
	}
	return nil
}

// authorizerPath is the path of the authorizer's checks.
var authorizerPath = "/users/" + Nobody.String()

// checkAuthorizer: the authorizer refuses a request without a token and one
// with a token it did not sign, with the error API Gateway turns into 401.
func checkAuthorizer(ctx context.Context, invoke Invoke) error {
	for _, authorization := range []string{"", "Bearer not-a-token"} {
		ev := events.APIGatewayCustomAuthorizerRequestTypeRequest{
			Type:       "REQUEST",
			MethodArn:  apigw.MethodARN("GET", authorizerPath),
			Resource:   "/users/{id}",
			Path:       authorizerPath,
			HTTPMethod: "GET",
			Headers:    map[string]string{"Host": host},
		}
		if authorization != "" {
			ev.Headers["Authorization"] = authorization
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		out, err := invoke(ctx, payload)
		if err == nil || err.Error() != "Unauthorized" {
			return fmt.Errorf("authorizer, Authorization %q: answered %.200s (error %v), want the error Unauthorized", authorization, out, err)
		}
	}
	return nil
}

func jsonObject(b []byte) error {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("not a JSON object: %.200s", b)
	}
	return nil
}

// member: a JSON object with the member name.
func member(name string) func([]byte) error {
	return func(b []byte) error {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil || v[name] == nil {
			return fmt.Errorf("not a JSON object with %q: %.200s", name, b)
		}
		return nil
	}
}

// problem: a problem of the code's type and status.
func problem(code string) func([]byte) error {
	return func(b []byte) error {
		var p rest.Problem
		if err := json.Unmarshal(b, &p); err != nil || p.Type != rest.ProblemType(code) || p.Status != rest.Status(code) {
			return fmt.Errorf("not a problem of type %s: %.200s", rest.ProblemType(code), b)
		}
		return nil
	}
}

func empty(b []byte) error {
	if len(bytes.TrimSpace(b)) > 0 {
		return fmt.Errorf("a body: %.200s", b)
	}
	return nil
}
