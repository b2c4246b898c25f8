package openapi

import (
	"strings"

	"github.com/quireapi/quire/internal/rest"
)

// corsHeaders are the CORS headers of every answer to a page of an origin
// the API allows, errors included (rest.CORS).
func corsHeaders() []string {
	return []string{"Access-Control-Allow-Origin", "Access-Control-Expose-Headers"}
}

func headerRef(name string) schema { return schema{"$ref": "#/components/headers/" + name} }

// cacheControlLen bounds Cache-Control, generously: the longest the API
// sends is "public, max-age=300".
const cacheControlLen = 64

// headers returns the response headers the operations refer to, by name.
func headers() schema {
	// A next page's link: the request's URL (see urlLen), its query
	// escaped again with the new cursor.
	next := len(`<https://?&cursor=>; rel="next"`) + rest.MaxHostLen + 3*rest.MaxURLLen + rest.MaxCursorLen
	return schema{
		"Location":      schema{"description": "The new resource's URL", "schema": str(urlLen())},
		"Link":          schema{"description": `The next page (RFC 8288, rel="next"), absent on the last page`, "schema": str(next)},
		"Cache-Control": schema{"description": "How long caches may keep the answer", "schema": str(cacheControlLen)},
		rest.ReplayedHeader: schema{
			"description": "true when the answer is the recorded first answer to the request's idempotency key",
			"schema":      constant("true"),
		},
		"ETag": schema{
			"description": `The strong entity tag of the representation: of its content, API version and encoding ` +
				`("<hash>-v1", "<hash>-v2-gzip"). Send it in If-None-Match to revalidate, in If-Match to write only over this state.`,
			"required": true,
			"schema":   schema{"type": "string", "maxLength": tagLen(true), "pattern": `^"[\x21\x23-\x7e]+"$`},
		},
		"Vary": schema{
			"description": "The request headers the answer depends on: Accept on a resource's paths (it chooses the API " +
				"version), Accept-Encoding where the body may be gzip-compressed, and Origin whenever the API allows any " +
				"origin (CORS).",
			"schema": str(len(strings.Join([]string{"Accept", "Accept-Encoding", "Origin"}, ", "))),
		},
		"Content-Encoding": schema{"description": "gzip when the request's Accept-Encoding takes it", "schema": schema{"type": "string", "enum": []any{"gzip"}}},
		"Retry-After": schema{
			"description": "Seconds to wait before sending the same request again",
			"required":    true,
			"schema":      schema{"type": "integer", "format": "int64", "minimum": 0},
		},
		"WWW-Authenticate": schema{
			"description": `The challenge of a 401: Bearer realm="quire", with error="invalid_token" when the request ` +
				`carried a token (API Gateway's own 401 always says so).`,
			"required": true,
			"schema":   schema{"type": "string", "maxLength": len(rest.BearerChallenge), "pattern": "^Bearer "},
		},
		"Access-Control-Allow-Origin": schema{
			"description": "The origin whose pages may read the answer: the request's Origin when the API allows it " +
				"(CORS_ORIGINS; the stack's context quire:corsOrigins), or * in API Gateway's own errors when any origin " +
				"is allowed. Absent for an origin the API does not allow, whose browser keeps the answer from its page.",
			"schema": str(rest.MaxOriginLen),
		},
		"Access-Control-Expose-Headers": schema{
			"description": "The response headers a page of an allowed origin may read besides the CORS-safelisted ones, " +
				"sent with Access-Control-Allow-Origin",
			"schema": constant(strings.Join(rest.CORSExposeHeaders, ", ")),
		},
	}
}
