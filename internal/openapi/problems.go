package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// writes reports whether route r changes stored data (every POST that
// takes an idempotency key, every PUT and DELETE), and so may meet another
// request changing the same data: a 409.
func writes(r routes.Route) bool {
	return r.Idempotency != routes.KeyNone || r.Method == http.MethodPut || r.Method == http.MethodDelete
}

// conflict documents the 409 of a write: ECONFLICT, with Retry-After, which
// the same request sent again can get past, and the operation's refusals,
// without it, which no retry fixes.
func (op operation) conflict() schema {
	description := "Conflict. " + rest.ProblemType(quire.ECONFLICT) + ": another request changed the same data " +
		"meanwhile, or the idempotency key's first request is still committing; send the same request again after " +
		"Retry-After seconds."
	if op.refusals != nil {
		var refusals []string
		for _, code := range op.refusals {
			refusals = append(refusals, fmt.Sprintf("%s (%s)", rest.ProblemType(code), rest.Title(code)))
		}
		description += " Any other type is a refusal of the current state that no retry fixes, without Retry-After: " +
			strings.Join(refusals, ", ") + "."
	}
	return problemResponse(description, append([]string{quire.ECONFLICT}, op.refusals...)...)
}

// failures returns the codes of the problems route r can answer, but for
// the 409s of a write (see conflict) and the errors the default response
// covers. They follow from what the route table says of the route and what
// the operation takes, and the operation adds its own problems:
//
//   - invalid (400): every route, which refuses a body it does not read
//     (routes.Route.Body), and a bad body, query or header parameter;
//   - unauthorized (401): a protected route;
//   - forbidden (403): a route that needs the admin role;
//   - not-found (404): a path parameter, which names a resource;
//   - not-acceptable (406): a resource's route, whose version Accept chooses;
//   - precondition (412): If-Match or If-None-Match;
//   - too-large (413) and media-type (415): a body;
//   - key-reused (422): an idempotency key;
//   - throttled (429): every route, behind API Gateway's throttling;
//   - unavailable (503): every route.
func (op operation) failures(r routes.Route) []string {
	params := op.parameters(r)
	preconditions := slices.ContainsFunc(params, func(p string) bool { return strings.HasPrefix(p, "if") })
	var codes []string
	for _, c := range []struct {
		code string
		when bool
	}{
		{quire.EINVALID, true},
		{quire.EUNAUTHORIZED, r.Access != routes.Public},
		{quire.EFORBIDDEN, r.Access == routes.Admin},
		{quire.ENOTFOUND, len(pathParameters(r)) > 0},
		{quire.ENOTACCEPTABLE, r.Versioned},
		{quire.EGONE, r.Versioned}, // once the version is past its sunset
		{quire.EPRECONDITION, preconditions},
		{quire.ETOOLARGE, op.body != nil},
		{quire.EMEDIATYPE, op.body != nil},
		{quire.EKEYREUSED, r.Idempotency != routes.KeyNone},
		{quire.ETHROTTLED, true},
	} {
		if c.when {
			codes = append(codes, c.code)
		}
	}
	codes = append(codes, codesOf(http.StatusServiceUnavailable)...)
	codes = append(codes, op.problems...)
	slices.Sort(codes)
	return slices.Compact(codes)
}

// byStatus groups error codes by their status.
func byStatus(codes []string) map[int][]string {
	out := map[int][]string{}
	for _, code := range codes {
		out[rest.Status(code)] = append(out[rest.Status(code)], code)
	}
	return out
}

// problemResponses returns the response of problems of codes, which share
// a status: a reference to the component of problems named after the code
// when there is one code (problems gets it the first time), or else the
// response itself.
func problemResponses(problems schema, codes []string) schema {
	if len(codes) == 1 {
		return problemRef(problems, componentName(codes[0]), func() schema {
			return problemResponse(problemDescription(codes[0]), codes...)
		})
	}
	var descriptions []string
	for _, code := range codes {
		descriptions = append(descriptions, problemDescription(code))
	}
	return problemResponse(strings.Join(descriptions, " "), codes...)
}

// problemRef returns a reference to the response component name of
// problems, which build makes when problems does not have it yet.
func problemRef(problems schema, name string, build func() schema) schema {
	if _, ok := problems[name]; !ok {
		problems[name] = build()
	}
	return schema{"$ref": "#/components/responses/" + name}
}

// componentName is the name of the response component of a code's
// problems: "NotFound" for not-found.
func componentName(code string) string {
	var name string
	for part := range strings.SplitSeq(code, "-") {
		name += strings.ToUpper(part[:1]) + part[1:]
	}
	return name
}

// otherErrors names the default response, of every error an operation
// does not list.
const otherErrors = "OtherError"

func otherErrorsResponse() schema {
	return response("Any other error, as an RFC 9457 problem: 500 internal (it says nothing of its cause; quote its "+
		"request_id), 502 or 504 when the function did not answer API Gateway in time, and, with the stack's web ACL "+
		"on, 403 forbidden for a request its managed rules block.",
		schema{rest.ProblemMediaType: schema{"schema": schema{"allOf": []any{ref("Problem"), schema{"type": "object", "properties": schema{"type": schema{
			"type": "string", "enum": []any{rest.ProblemType(quire.EFORBIDDEN), rest.ProblemType(quire.EGATEWAY), rest.ProblemType(quire.EINTERNAL)},
		}}}}}}}, []string{"Cache-Control"})
}

// problemDescription says what a problem of code means in any operation
// that lists it.
func problemDescription(code string) string {
	switch code {
	case quire.EINVALID:
		return "Invalid request: the body is not JSON, not of the operation's schema, or has fields that fail its " +
			"checks (errors lists each by its JSON Pointer), or the operation takes no body and one was sent; or a " +
			"query parameter is not valid or sent more than once (errors names it as /<name>), or a header is not valid."
	case quire.EUNAUTHORIZED:
		return "No valid credentials: the bearer token is missing, invalid or expired (log in again), or the " +
			"credentials the operation checks are not valid."
	case quire.EFORBIDDEN:
		return "Forbidden: the token is valid, but this route needs the admin role."
	case quire.EWRONGPASSWORD:
		return "Wrong password: current_password is not the password, nothing was changed, and the attempt counts " +
			"as a failed login of the account's email."
	case quire.ENOTFOUND:
		return "Not found: nothing has the id in the path (another customer's resource is not found either), or " +
			"the resource the operation reads does not exist."
	case quire.ENOTACCEPTABLE:
		return "Not acceptable: Accept takes none of the route's media types, such as a version that does not " +
			"exist, or another version than the path's."
	case quire.EGONE:
		return "Gone: the version asked for (by the path, or by Accept) is past its sunset date, which its answers " +
			"announced beforehand in the Deprecation and Sunset headers; Link names the resource in the version " +
			"that succeeds it (rel=\"successor-version\")."
	case quire.EPRECONDITION:
		return "Precondition failed: If-Match or If-None-Match does not hold for the current state; nothing was " +
			"written, nor paid."
	case quire.ETOOLARGE:
		return fmt.Sprintf("Request body too large: over %d bytes (%d for the configuration document).",
			rest.MaxBodyBytes, config.MaxBytes)
	case quire.EMEDIATYPE:
		return "Unsupported media type: the body is not application/json (or another +json type) in UTF-8."
	case quire.EKEYREUSED:
		return "Idempotency key reused: the key came before with another request (another body, path or " +
			"version); nothing was done. A new request takes a new key."
	case quire.ETHROTTLED:
		return "Too many requests: past API Gateway's throttling (the stage's, or the route's own), past the web " +
			"ACL's limit per address or per bearer token (its body is then application/json), or a login of a " +
			"locked email. Send the same request again after Retry-After seconds."
	case quire.EUNAVAILABLE:
		return "Service unavailable: a dependency does not answer, or the request did not complete in time. Send " +
			"the same request again after Retry-After seconds; a write retried with the same idempotency key " +
			"takes effect once."
	}
	return rest.Title(code) + "."
}

// problemResponse is a response of problems of the given codes only. It
// has Retry-After, required when every code is retryable and optional when
// some are, WWW-Authenticate for a 401, and the headers of every problem.
// Throttling by the web ACL answers its problem as application/json.
func problemResponse(description string, codes ...string) schema {
	var types []any
	retryable := 0
	for _, code := range codes {
		types = append(types, rest.ProblemType(code))
		if rest.Retryable(code) {
			retryable++
		}
	}
	body := schema{"schema": schema{"allOf": []any{
		ref("Problem"),
		schema{"type": "object", "properties": schema{"type": schema{"type": "string", "enum": types}}},
	}}}
	content := schema{rest.ProblemMediaType: body}
	if slices.Contains(codes, quire.ETHROTTLED) {
		content[rest.MediaTypeJSON] = body
	}
	var more []string
	if retryable == len(codes) {
		more = append(more, "Retry-After")
	}
	if slices.Contains(codes, quire.EUNAUTHORIZED) {
		more = append(more, "WWW-Authenticate")
	}
	out := response(description, content, []string{"Cache-Control"}, more)
	if retryable > 0 && retryable < len(codes) {
		out["headers"].(schema)["Retry-After"] = schema{
			"description": "Seconds to wait before sending the same request again. Only a problem the same request " +
				"can get past (" + strings.Join(retryableTypes(), ", ") + ") carries it.",
			"required": false,
			"schema":   schema{"type": "integer", "format": "int64", "minimum": 0},
		}
	}
	return out
}

// codesOf returns the error codes of status.
func codesOf(status int) []string {
	var out []string
	for _, code := range rest.Codes() {
		if rest.Status(code) == status {
			out = append(out, code)
		}
	}
	return out
}

// retryableTypes returns the problem types that carry Retry-After.
func retryableTypes() []string {
	var out []string
	for _, code := range rest.Codes() {
		if rest.Retryable(code) {
			out = append(out, rest.ProblemType(code))
		}
	}
	return out
}

// titleLen is the length of the longest title of a problem.
func titleLen() int {
	n := 0
	for _, code := range rest.Codes() {
		n = max(n, len(rest.Title(code)))
	}
	return n
}

// problemType is the schema of a problem's type: one URI per error code,
// each with its status.
func problemType() schema {
	var types []any
	var kinds []string
	for _, code := range rest.Codes() {
		types = append(types, rest.ProblemType(code))
		kind := fmt.Sprintf("%s: %d, %s", code, rest.Status(code), rest.Title(code))
		if rest.Retryable(code) {
			kind += ", with Retry-After"
		}
		kinds = append(kinds, kind)
	}
	return schema{
		"type": "string", "format": "uri", "enum": types,
		"description": "What went wrong, stable for a client to branch on: " + rest.ProblemTypeBase + "<kind>, " +
			"kind and status being " + strings.Join(kinds, "; ") + ". A 409 of type conflict is a collision with " +
			"another request, which the same request sent again can get past; the other 409s are refusals of the " +
			"current state that no retry fixes.",
	}
}
