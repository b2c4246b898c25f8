// Package apigw connects Quire's net/http handlers to API Gateway: the Lambda
// handler that turns REST proxy events (payload 1.0) into requests, and the
// local gateway that turns HTTP requests into those same events.
package apigw

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// Handler is a Lambda function behind an API Gateway REST API proxy
// integration.
type Handler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// FunctionTimeout is how long the stack lets a function run. A function
// past it is stopped by Lambda, and API Gateway answers 502 for it, which
// Quire cannot shape.
const FunctionTimeout = 10 * time.Second

// DeadlineMargin is how much of an invocation's time NewHandler keeps for
// answering: a request whose work is not done DeadlineMargin before the
// function's deadline gets a 503 problem instead of Lambda's timeout.
const DeadlineMargin = 500 * time.Millisecond

// NewHandler returns the Lambda handler that serves h through
// aws-lambda-go-api-proxy, with API Gateway's request context available to h
// and, when the invocation has a deadline (Lambda's context always does),
// the request's context ending DeadlineMargin before it. With a log, each
// request gets a telemetry.Record in its context, which log writes as the
// request's line once it is answered.
func NewHandler(h http.Handler, log *telemetry.Logger) Handler {
	a := httpadapter.New(h)
	var served atomic.Bool // this instance has served a request: the next ones are warm
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		start := time.Now()
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-DeadlineMargin))
			defer cancel()
		}
		var rec *telemetry.Record
		if log != nil {
			rec = &telemetry.Record{}
			ctx = telemetry.NewContext(ctx, rec)
		}
		ev.Path = routePath(ev)
		resp, err := a.ProxyWithContext(ctx, ev)
		if log != nil {
			status := resp.StatusCode
			if err != nil {
				status = http.StatusBadGateway // what API Gateway answers for a failed invocation
				rec.Fail("", err)
			}
			log.Write(ctx, telemetry.Request{
				Route:     routeOf(ev.HTTPMethod, ev.Resource),
				Status:    status,
				Latency:   time.Since(start),
				ColdStart: !served.Swap(true),
				RequestID: ev.RequestContext.RequestID,
				TraceID:   traceID(ctx, ev),
				Caller:    authorizerValue(ev, rest.ContextUserID),
				Role:      authorizerValue(ev, rest.ContextRole),
			}, rec)
		}
		return resp, err
	}
}

// routePath is the path h serves for ev, escaped, as the adapter parses it
// back as part of a URL (else "/users/%" fails to parse, a 502 for a
// client's typo, and "/users/1%3F" loses its "?"): the route API Gateway
// matched, ev's resource with its path parameters. ev's path is the one the
// client sent, with the base path of a custom domain's mapping in front
// ("/shop/users/2" for "/users/{id}"), which no event field names; the
// resource and its parameters are the same under every mapping, and the
// stage's default endpoint. What the client's path has before that route
// is its base path, which links keep (see rest.URL). An event whose
// resource is not a path of the route table (a generic sample event's
// "/{proxy+}") is served by its path.
func routePath(ev events.APIGatewayProxyRequest) string {
	if p, ok := routes.Resolve(ev.Resource, ev.PathParameters); ok {
		return p
	}
	return (&url.URL{Path: ev.Path}).EscapedPath()
}

// routeOf names the route a request took, as its line and metrics do:
// the route table's route without its version prefix ("GET /users/{id}"),
// HEAD under its GET route's path ("HEAD /users/{id}"), a browser's
// preflight on any path as "OPTIONS", and "other" for a method the path
// does not have, so that the names, and the metrics per name, are few.
func routeOf(method, resource string) string {
	switch method {
	case http.MethodOptions:
		return method
	case http.MethodHead:
		if r, ok := routes.Find(http.MethodGet, resource); ok {
			return method + " " + r.Resource().Path
		}
		return "other"
	}
	if r, ok := routes.Find(method, resource); ok {
		return r.Resource().Key()
	}
	return "other"
}

// traceID is the root of the request's X-Ray trace id: Lambda's, from the
// invocation, or else the one API Gateway passed in X-Amzn-Trace-Id.
func traceID(ctx context.Context, ev events.APIGatewayProxyRequest) string {
	header, _ := ctx.Value("x-amzn-trace-id").(string) // aws-lambda-go's key for the invocation's trace header
	if header == "" {
		header = ev.Headers["X-Amzn-Trace-Id"]
	}
	for _, part := range strings.Split(header, ";") {
		if root, ok := strings.CutPrefix(strings.TrimSpace(part), "Root="); ok {
			return root
		}
	}
	return ""
}

// authorizerValue is a value the authorizer put in the request's context,
// as a string.
func authorizerValue(ev events.APIGatewayProxyRequest, key string) string {
	switch v := ev.RequestContext.Authorizer[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
