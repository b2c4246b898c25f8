package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

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
