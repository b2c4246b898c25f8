// Package apigw connects Quire's net/http handlers to API Gateway: the Lambda
// handler that turns REST proxy events (payload 1.0) into requests, and the
// local gateway that turns HTTP requests into those same events.
package apigw

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
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
// the request's context ending DeadlineMargin before it.
func NewHandler(h http.Handler) Handler {
	a := httpadapter.New(h)
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-DeadlineMargin))
			defer cancel()
		}
		// API Gateway passes the path decoded, and the adapter parses it
		// back as part of a URL: escape it, or "/users/%" fails to parse
		// (a 502 for a client's typo) and "/users/1%3F" loses its "?".
		ev.Path = (&url.URL{Path: ev.Path}).EscapedPath()
		return a.ProxyWithContext(ctx, ev)
	}
}
