package rest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/quireapi/quire/shared/login"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
)

// Caller is who makes a request on a protected route, as the authorizer
// identified them from their token.
type Caller struct {
	ID      quire.ID
	Role    quire.Role
	Expires time.Time
	// SessionID is the session the token belongs to ("" for none).
	SessionID string
}

// Admin reports whether the caller has the admin role.
func (c Caller) Admin() bool { return c.Role == quire.RoleAdmin }

// Owns reports whether the caller may act on the user id's resources: their
// own, or anyone's for an admin.
func (c Caller) Owns(id quire.ID) bool { return c.ID == id || c.Admin() }

// The keys of the authorizer context, which the authorizer fills and API
// Gateway passes to functions in requestContext.authorizer.
const (
	ContextUserID  = "user_id"
	ContextRole    = "role"
	ContextExpires = "expires" // Unix seconds
	ContextSession = "session_id"
)

type callerKey struct{}

// CallerOf returns the caller of a protected route, which the router has
// checked; on a public route it is the zero Caller.
func CallerOf(r *http.Request) Caller {
	c, _ := r.Context().Value(callerKey{}).(Caller)
	return c
}

// authorize checks that the caller of r may call a route with access a, and
// returns r carrying the caller (r itself with an error). API Gateway's authorizer has decided
// already; checking again here keeps a function safe from a stack that
// forgot to attach it, and refuses a token that expired while API Gateway
// kept its decision cached.
func authorize(r *http.Request, a routes.Access, now time.Time) (*http.Request, error) {
	if a == routes.Public {
		return r, nil
	}
	c, err := authorizerCaller(r)
	if err != nil {
		return r, &quire.Error{Code: quire.EUNAUTHORIZED, Message: "This route needs a valid bearer token.", Err: err}
	}
	if !now.Before(c.Expires.Add(login.ClockLeeway)) { // as the authorizer took it
		return r, quire.Errorf(quire.EUNAUTHORIZED, "The token has expired; log in again.")
	}
	if a == routes.Admin && !c.Admin() {
		return r, quire.Errorf(quire.EFORBIDDEN, "This route needs the admin role.")
	}
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, c)), nil
}

// authorizerCaller reads the caller from the authorizer context API Gateway
// puts in the request context.
func authorizerCaller(r *http.Request) (Caller, error) {
	rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil {
		return Caller{}, fmt.Errorf("no authorizer context")
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
		return Caller{}, fmt.Errorf("authorizer context: user id %q", get(ContextUserID))
	}
	role := quire.Role(get(ContextRole))
	if !role.Valid() {
		return Caller{}, fmt.Errorf("authorizer context: role %q", role)
	}
	exp, err := strconv.ParseInt(get(ContextExpires), 10, 64)
	if err != nil {
		return Caller{}, fmt.Errorf("authorizer context: expires %q", get(ContextExpires))
	}
	return Caller{ID: id, Role: role, Expires: time.Unix(exp, 0), SessionID: get(ContextSession)}, nil
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
