package openapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
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
	return problemResponse(description, false, append([]string{quire.ECONFLICT}, op.refusals...)...)
}

// problemResponse is a response of problems of the given codes only, with
// a Retry-After header that is required or optional.
func problemResponse(description string, retryAfterRequired bool, codes ...string) schema {
	var types []any
	for _, code := range codes {
		types = append(types, rest.ProblemType(code))
	}
	return schema{
		"description": description,
		"headers": schema{"Retry-After": schema{
			"description": "Seconds to wait before sending the same request again. Only a problem the same request " +
				"can get past (" + strings.Join(retryableTypes(), ", ") + ") carries it.",
			"required": retryAfterRequired,
			"schema":   schema{"type": "integer", "minimum": 0},
		}},
		"content": schema{rest.ProblemMediaType: schema{"schema": schema{"allOf": []any{
			ref("Problem"),
			schema{"properties": schema{"type": schema{"enum": types}}},
		}}}},
	}
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
