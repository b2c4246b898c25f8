package apigw

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Authorizer is a Lambda REQUEST authorizer.
type Authorizer func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// The bodies of API Gateway's UNAUTHORIZED and ACCESS_DENIED responses, which
// the stack sets and the local gateway sends alike.
const (
	DetailUnauthorized = "This route needs a valid bearer token: log in at POST /login."
	DetailForbidden    = "The token does not allow this route."
)

// decision is an authorizer's answer, as API Gateway caches it.
type decision struct {
	resp    events.APIGatewayCustomAuthorizerResponse
	expires time.Time
}

// MethodARN is the ARN API Gateway gives the authorizer for a request on
// the local gateway: its method and actual path under the local stage.
func MethodARN(method, path string) string {
	return "arn:aws:execute-api:local:000000000000:local/" + Stage + "/" + method + path
}

// authorize runs the authorizer for a request on a route with access a the
// way API Gateway does: no Authorization header is 401 without calling it;
// its "Unauthorized" error is 401; any other error is 500; a policy that
// does not allow the method ARN is 403. The answer is cached per
// Authorization header for AuthorizerTTL and the cached policy is applied
// to every later request with the header, whatever its route. More than one
// Authorization header (their names in any case) is 401 without calling
// it, which would refuse them too (see authorizer.Authorizer.Handle): a decision
// is cached under the one credential it was made for. It returns the
// authorizer context for the function's event, or a problem.
func (g *Gateway) authorize(r *http.Request, path, resource string, params map[string]string, requestID string) (map[string]any, *rest.Problem) {
	deny := func(code, detail string, status int) *rest.Problem {
		p := rest.NewProblem(code, detail)
		p.Status = status
		return &p
	}
	credentials := r.Header.Values("Authorization") // net/http joins every case of the name
	if len(credentials) != 1 || credentials[0] == "" {
		return nil, deny(quire.EUNAUTHORIZED, DetailUnauthorized, http.StatusUnauthorized)
	}
	token := credentials[0]
	arn := MethodARN(r.Method, path) // the path of the route, without a base path, as API Gateway's
	d, ok := g.cached(token)
	if !ok {
		ev := events.APIGatewayCustomAuthorizerRequestTypeRequest{
			Type:              "REQUEST",
			MethodArn:         arn,
			Resource:          resource,
			Path:              r.URL.Path,
			HTTPMethod:        r.Method,
			Headers:           map[string]string{},
			MultiValueHeaders: r.Header.Clone(),
			PathParameters:    params,
			RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
				AccountID: "000000000000", ResourceID: resource, Stage: Stage, RequestID: requestID,
				ResourcePath: resource, HTTPMethod: r.Method, APIID: "local", Path: r.URL.Path,
			},
		}
		for k, vs := range r.Header {
			ev.Headers[k] = vs[len(vs)-1]
		}
		resp, err := g.Authorizer(r.Context(), ev)
		switch {
		case err != nil && err.Error() == "Unauthorized":
			return nil, deny(quire.EUNAUTHORIZED, DetailUnauthorized, http.StatusUnauthorized)
		case err != nil:
			slog.Error("authorizer failed", "request_id", requestID, "err", err)
			return nil, deny(quire.EGATEWAY, "The authorizer failed; see its log.", http.StatusInternalServerError)
		}
		d = decision{resp: resp, expires: time.Now().Add(g.AuthorizerTTL)}
		g.store(token, d)
	}
	if !PolicyAllows(d.resp.PolicyDocument, arn) {
		return nil, deny(quire.EFORBIDDEN, DetailForbidden, http.StatusForbidden)
	}
	out := map[string]any{"principalId": d.resp.PrincipalID}
	for k, v := range d.resp.Context {
		out[k] = v
	}
	return out, nil
}

func (g *Gateway) cached(token string) (decision, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, ok := g.decisions[token]
	if ok && time.Now().After(d.expires) {
		delete(g.decisions, token)
		ok = false
	}
	return d, ok
}

func (g *Gateway) store(token string, d decision) {
	if g.AuthorizerTTL <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.decisions == nil {
		g.decisions = map[string]decision{}
	}
	if len(g.decisions) >= maxCachedDecisions {
		clear(g.decisions) // a crude bound; API Gateway's cache is bounded too
	}
	g.decisions[token] = d
}

const maxCachedDecisions = 10000

// PolicyAllows evaluates an authorizer's IAM policy for execute-api:Invoke
// on arn as IAM does: an explicit Deny wins, then an Allow, and anything
// else is denied.
func PolicyAllows(p events.APIGatewayCustomAuthorizerPolicy, arn string) bool {
	allowed := false
	for _, s := range p.Statement {
		if !matchesAny(s.Action, "execute-api:Invoke") || !matchesAny(s.Resource, arn) {
			continue
		}
		switch s.Effect {
		case "Deny":
			return false
		case "Allow":
			allowed = true
		}
	}
	return allowed
}

func matchesAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if glob(p, s) {
			return true
		}
	}
	return false
}

// glob matches s against an IAM pattern, where * is any run of characters
// (slashes included) and ? is one character.
func glob(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			rest := strings.TrimLeft(pattern, "*")
			if rest == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if glob(rest, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		}
	}
	return s == ""
}
