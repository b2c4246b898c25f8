package rest

import (
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// RequestID returns the API Gateway request id of r, which the proxy adapter
// puts in the request context, or "" outside API Gateway.
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}
