// Package authorizer is the Lambda REQUEST authorizer of every protected
// route: it verifies the bearer token (package auth) and answers API
// Gateway with the policy of the token's role.
package authorizer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// ErrUnauthorized is the error a REST API Lambda authorizer returns for a
// request without valid credentials: API Gateway answers it with 401 (its
// UNAUTHORIZED gateway response) when the message is exactly "Unauthorized".
var ErrUnauthorized = errors.New("Unauthorized")

// Refused is the message of the authorizer's line for each token it
// refuses. Its refusals are invocation errors (ErrUnauthorized), which the
// stack's alarm on the authorizer's failures tells from real ones by
// counting these lines.
const Refused = "unauthorized"

// Authorizer is the Lambda REQUEST authorizer of every protected route.
//
// API Gateway caches its answer per Authorization header and applies the
// cached policy to whatever route the same token calls next, so the policy
// must not depend on the route that was called first: it allows every
// route of the API and denies, by route, those the token's role may not
// call. A customer's cached policy thus still denies /admin routes.
type Authorizer struct {
	Verifier *auth.Verifier
}

// NewAuthorizer returns the authorizer that verifies tokens of tokens'
// issuer and audience with the public keys of jwks, a JWK Set. It returns
// an error when jwks is empty or not a JWK Set.
func NewAuthorizer(jwks string, tokens login.TokenConfig) (*Authorizer, error) {
	if jwks == "" {
		return nil, errors.New("authorizer: set JWKS")
	}
	keys, err := auth.ParseKeySet([]byte(jwks))
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	return &Authorizer{Verifier: auth.NewVerifier(keys, tokens, nil)}, nil
}

// AuthorizerFromEnv is NewAuthorizer with what the authorizer function's
// environment says: the keys in JWKS, the issuer and audience in
// TOKEN_ISSUER and TOKEN_AUDIENCE.
func AuthorizerFromEnv(getenv func(string) string) (*Authorizer, error) {
	tokens, err := login.TokenConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return NewAuthorizer(getenv("JWKS"), tokens)
}

// MaxCacheTTL bounds how long API Gateway keeps an authorizer decision.
const MaxCacheTTL = 5 * time.Minute

// CacheTTL is how long API Gateway may cache a decision for tokens of the
// given lifetime: never longer than a token lives. A cached decision can
// still outlast the token it was made for by up to this long, which is why
// functions check the expiry in the authorizer context again.
func CacheTTL(lifetime time.Duration) time.Duration { return min(lifetime, MaxCacheTTL) }

// Handle verifies the bearer token of ev. It returns ErrUnauthorized for a
// missing, malformed or invalid token, or for more than one Authorization
// header, and for a valid token the policy of its role with the caller's
// identity in the context. Another error means ev's method ARN is malformed
// (API Gateway answers 500).
func (a *Authorizer) Handle(ctx context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	h, ok := authorization(ev)
	if !ok {
		slog.InfoContext(ctx, Refused, "reason", "more than one Authorization header", "request_id", ev.RequestContext.RequestID)
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	token, ok := BearerToken(h)
	if !ok {
		slog.InfoContext(ctx, Refused, "reason", "no bearer token", "request_id", ev.RequestContext.RequestID)
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	id, err := a.Verifier.Verify(token)
	if err != nil {
		slog.InfoContext(ctx, Refused, "reason", err.Error(), "request_id", ev.RequestContext.RequestID)
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	policy, err := Policy(ev.MethodArn, id.Role)
	if err != nil {
		return events.APIGatewayCustomAuthorizerResponse{}, err
	}
	context := map[string]any{
		rest.ContextUserID:  id.UserID.String(),
		rest.ContextRole:    string(id.Role),
		rest.ContextExpires: strconv.FormatInt(id.Expires.Unix(), 10),
	}
	if id.SessionID != "" {
		context[rest.ContextSession] = id.SessionID
	}
	return events.APIGatewayCustomAuthorizerResponse{PrincipalID: id.UserID.String(), PolicyDocument: policy, Context: context}, nil
}

// authorization returns the Authorization header of ev, whatever the case
// of its name ("" for none), or false when ev has more than one: API
// Gateway would cache the decision under one of them, maybe not the one
// verified. The values are ev's multi-value headers', and any other its
// single-value headers hold (an event without multi-value headers).
func authorization(ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (string, bool) {
	var values []string
	for k, vs := range ev.MultiValueHeaders {
		if strings.EqualFold(k, "Authorization") {
			values = append(values, vs...)
		}
	}
	for k, v := range ev.Headers {
		if strings.EqualFold(k, "Authorization") && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	switch len(values) {
	case 0:
		return "", true
	case 1:
		return values[0], true
	}
	return "", false
}

// BearerToken returns the token of an Authorization header value of the
// form "Bearer <token>" (RFC 6750; the scheme in any case), or false.
func BearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// Policy returns the IAM policy of a role for the API and stage of
// methodArn: Allow on every method of every path, and Deny on each route the
// role may not call (routes whose path parameters become wildcards). Only
// protected methods use the authorizer, so public routes are unaffected.
func Policy(methodArn string, role quire.Role) (events.APIGatewayCustomAuthorizerPolicy, error) {
	base, err := stageARN(methodArn)
	if err != nil {
		return events.APIGatewayCustomAuthorizerPolicy{}, err
	}
	statement := func(effect string, resources []string) events.IAMPolicyStatement {
		return events.IAMPolicyStatement{Action: []string{"execute-api:Invoke"}, Effect: effect, Resource: resources}
	}
	p := events.APIGatewayCustomAuthorizerPolicy{
		Version:   "2012-10-17",
		Statement: []events.IAMPolicyStatement{statement("Allow", []string{base + "/*/*"})},
	}
	var denied []string
	for _, r := range DeniedRoutes(role) {
		denied = append(denied, base+"/"+r)
	}
	if len(denied) > 0 {
		p.Statement = append(p.Statement, statement("Deny", denied))
	}
	return p, nil
}

// DeniedRoutes returns the routes a role may not call, as the method and
// path part of an execute-api ARN ("GET/admin/users"): every method ("*") of
// a path whose routes all need more than the role, and the single method of
// any other route that does (with HEAD for a GET).
func DeniedRoutes(role quire.Role) []string {
	var out []string
	for _, path := range routes.Paths() {
		arnPath := strings.TrimPrefix(wildcardParams(path), "/")
		if !access.Permits(role, routes.PathAccess(path)) {
			out = append(out, "*/"+arnPath)
			continue
		}
		for _, r := range routes.All() {
			if r.Path == path && !access.Permits(role, r.Access) {
				out = append(out, r.Method+"/"+arnPath)
				if r.Method == http.MethodGet {
					out = append(out, http.MethodHead+"/"+arnPath) // HEAD is the GET's
				}
			}
		}
	}
	return slices.Compact(out)
}

func wildcardParams(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// stageARN returns the ARN of the API stage of a method ARN:
// arn:aws:execute-api:region:account:api/stage/METHOD/path becomes
// arn:aws:execute-api:region:account:api/stage.
func stageARN(methodArn string) (string, error) {
	parts := strings.SplitN(methodArn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "execute-api" {
		return "", fmt.Errorf("authorizer: malformed method ARN %q", methodArn)
	}
	res := strings.SplitN(parts[5], "/", 3)
	if len(res) != 3 || res[0] == "" || res[1] == "" {
		return "", fmt.Errorf("authorizer: malformed method ARN %q", methodArn)
	}
	return strings.Join(parts[:5], ":") + ":" + res[0] + "/" + res[1], nil
}
