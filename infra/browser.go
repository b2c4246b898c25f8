package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// contextCORS names the origins whose pages may call the API from a
// browser: a comma-separated list, as CORS_ORIGINS takes it (see
// rest.ParseCORS); none when unset.
const contextCORS = "quire:corsOrigins"

// corsOrigins reads contextCORS. It panics (failing the synth) on a list
// that does not parse.
func corsOrigins(stack awscdk.Stack) rest.CORS {
	v := stack.Node().TryGetContext(jsii.String(contextCORS))
	if v == nil {
		return rest.CORS{}
	}
	c, err := rest.ParseCORS(fmt.Sprint(v))
	if err != nil {
		panic(fmt.Sprintf("context %s = %v: %v", contextCORS, v, err))
	}
	return c
}

// gatewayCORSHeaders are the CORS headers of API Gateway's own answers
// (401, 403, 404, 429, 5xx: see gatewayResponses), as response parameter
// expressions. A gateway response cannot choose by the request's origin as
// the functions do: for one allowed origin, or "*", it names that; for
// several (or a port pattern) it repeats the request's Origin, so that any
// origin reads the gateway's own problems, which say nothing beyond the
// error. None without an allowed origin.
func gatewayCORSHeaders(c rest.CORS) map[string]string {
	origins := c.Origins()
	if len(origins) == 0 {
		return nil
	}
	allow := "method.request.header.Origin"
	if len(origins) == 1 && !strings.HasSuffix(origins[0], ":*") {
		allow = "'" + origins[0] + "'"
	}
	return map[string]string{
		"Access-Control-Allow-Origin":   allow,
		"Access-Control-Expose-Headers": "'" + strings.Join(rest.CORSExposeHeaders, ", ") + "'",
		"Vary":                          "'Origin'",
	}
}

// headMethod returns the GET route of path, a resource of API Gateway's
// (see routes.Gateway), when HEAD needs a method of its own there: when
// the path's ANY method would not serve it as the GET, because the GET's
// group is not the path's owner, or the GET needs other access than the
// path's ANY method runs with (a public ANY would skip the authorizer a
// protected GET needs). Elsewhere ANY serves HEAD, to keep the methods
// few.
func headMethod(path string) (routes.Route, bool) {
	for _, r := range routes.All() {
		if g, _ := routes.Gateway(r.Path); g == path && r.Method == "GET" {
			return r, r.Group != routes.Owner(path) || r.Access != routes.PathAccess(path)
		}
	}
	return routes.Route{}, false
}
