package rest

import (
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// RequestIDLen is the length of a request id: a UUID, as API Gateway's
// and the local gateway's are.
const RequestIDLen = len("00000000-0000-0000-0000-000000000000")

// RequestID returns the API Gateway request id of r, which the proxy adapter
// puts in the request context, or "" outside API Gateway.
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}
