// Package rest holds Quire's HTTP conventions: RFC 9457 problem details for
// every error, strict JSON request bodies, explicit JSON responses, pages with
// RFC 8288 Link headers, and routers built from the route table.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/telemetry"
)

// ProblemMediaType is the media type of every error body.
const ProblemMediaType = "application/problem+json"

// ProblemTypeBase prefixes each error code to make a problem type URI.
const ProblemTypeBase = "https://quire.dev/problems/"

// codes maps each error code to its HTTP status and a short title.
var codes = map[string]struct {
	status int
	title  string
}{
	quire.EINVALID:       {http.StatusBadRequest, "Invalid request"},
	quire.EUNAUTHORIZED:  {http.StatusUnauthorized, "Unauthorized"},
	quire.EFORBIDDEN:     {http.StatusForbidden, "Forbidden"},
	quire.ENOTFOUND:      {http.StatusNotFound, "Not found"},
	quire.EMETHOD:        {http.StatusMethodNotAllowed, "Method not allowed"},
	quire.ENOTACCEPTABLE: {http.StatusNotAcceptable, "Not acceptable"},
	quire.EGONE:          {http.StatusGone, "Gone"},
	quire.ECONFLICT:      {http.StatusConflict, "Conflict"},
	quire.EKEYREUSED:     {http.StatusUnprocessableEntity, "Idempotency key reused"},
	quire.EPRECONDITION:  {http.StatusPreconditionFailed, "Precondition failed"},
	quire.ETOOLARGE:      {http.StatusRequestEntityTooLarge, "Request body too large"},
	quire.EMEDIATYPE:     {http.StatusUnsupportedMediaType, "Unsupported media type"},
	quire.EUNAVAILABLE:   {http.StatusServiceUnavailable, "Service unavailable"},
	quire.EINTERNAL:      {http.StatusInternalServerError, "Internal error"},
	quire.ETHROTTLED:     {http.StatusTooManyRequests, "Too many requests"},
	quire.EGATEWAY:       {http.StatusBadGateway, "Gateway error"},

	// Refusals: conflicts with the current state that no retry fixes.
	quire.EINSUFFICIENTFUNDS:  {http.StatusConflict, "Insufficient funds"},
	quire.EACCOUNTCLOSED:      {http.StatusConflict, "Account closed"},
	quire.EBALANCELIMIT:       {http.StatusConflict, "Balance limit reached"},
	quire.EBALANCENOTZERO:     {http.StatusConflict, "Balance not zero"},
	quire.ECARTEMPTY:          {http.StatusConflict, "Cart empty"},
	quire.EPRODUCTUNAVAILABLE: {http.StatusConflict, "Product unavailable"},
	quire.ECARTFULL:           {http.StatusConflict, "Cart full"},
	quire.EEMAILTAKEN:         {http.StatusConflict, "Email taken"},

	quire.EWRONGPASSWORD: {http.StatusForbidden, "Wrong password"},
}

// Codes returns every error code, sorted.
func Codes() []string { return slices.Sorted(maps.Keys(codes)) }

// Status returns the HTTP status for an error code; 500 for an unknown code.
func Status(code string) int {
	if c, ok := codes[code]; ok {
		return c.status
	}
	return http.StatusInternalServerError
}

// Title returns the short, fixed title of an error code's problem type.
func Title(code string) string {
	if c, ok := codes[code]; ok {
		return c.title
	}
	return codes[quire.EINTERNAL].title
}

// ProblemType returns the problem type URI of an error code.
func ProblemType(code string) string { return ProblemTypeBase + code }

// Retryable reports whether a problem of code is one that the same request,
// sent again after a while, can get past: a service unavailable (503), a
// collision with another request (ECONFLICT) and too many requests
// (ETHROTTLED: API Gateway's limits, a locked login). Error answers these,
// and only these, with Retry-After (1 second, or the error's RetryAfter); a
// refusal of the current state (such as EINSUFFICIENTFUNDS, also 409) is
// not retryable.
func Retryable(code string) bool {
	return code == quire.ECONFLICT || code == quire.ETHROTTLED || Status(code) == http.StatusServiceUnavailable
}

// Problem is an RFC 9457 problem details body.
type Problem struct {
	Type      string             `json:"type"`
	Title     string             `json:"title"`
	Status    int                `json:"status"`
	Detail    string             `json:"detail,omitempty"`
	Instance  string             `json:"instance,omitempty"`
	RequestID string             `json:"request_id,omitempty"`
	Errors    []quire.FieldError `json:"errors,omitempty"`
}

// The bounds of a problem's texts, in characters. A detail or a pointer
// may quote the request (a header's value, a member's name): WriteProblem
// cuts what passes them, and lists MaxFieldErrors errors at most; no
// write has that many fields.
const (
	MaxDetailLen   = 1024 // a detail, the problem's or an error's
	MaxPointerLen  = 1024 // an error's pointer
	MaxFieldErrors = 16
)

// Bounded returns p with its texts and errors cut to the bounds above.
func (p Problem) Bounded() Problem {
	p.Detail = cut(p.Detail, MaxDetailLen)
	errs := p.Errors[:min(len(p.Errors), MaxFieldErrors)]
	p.Errors = nil
	for _, e := range errs {
		p.Errors = append(p.Errors, quire.FieldError{Pointer: cut(e.Pointer, MaxPointerLen), Detail: cut(e.Detail, MaxDetailLen)})
	}
	return p
}

// cut returns s, or its first n-1 characters and an ellipsis when it has
// more than n.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// NewProblem builds the problem for a code with a detail message.
func NewProblem(code, detail string) Problem {
	return Problem{Type: ProblemType(code), Title: Title(code), Status: Status(code), Detail: detail}
}

// Error writes err as problem+json. A *quire.Error shows its code, message and
// fields; a request that ran out of time (its deadline passed, or its caller
// went away) is EUNAVAILABLE, and so is a call to AWS that the SDK's retryer
// gave up on (DynamoDB throttled, failed or did not answer it on every
// attempt, see dynamo's retryer) or that its retry quota stopped; any other error is an internal error whose body
// says nothing about it, while the request's line (see telemetry.Record)
// gets the error.
// A retryable problem (see Retryable) carries Retry-After: 1, unless the
// handler set another; no other problem does. A 401 carries its challenge.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	var p Problem
	retryAfter := 1
	_, gaveUp := errors.AsType[*retry.MaxAttemptsError](err)
	_, quota := errors.AsType[ratelimit.QuotaExceededError](err)
	switch _, ok := errors.AsType[*quire.Error](err); {
	case ok:
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		err = &quire.Error{Code: quire.EUNAVAILABLE, Message: "The request did not complete in time. Retry in a moment; a write retried with the same Idempotency-Key takes effect once.", Err: err}
	case gaveUp || quota:
		err = quire.Busy(err)
	}
	code := quire.EINTERNAL
	if e, ok := errors.AsType[*quire.Error](err); ok && e.Code != quire.EINTERNAL {
		code = e.Code
		retryAfter = max(retryAfter, e.RetryAfter)
		p = NewProblem(e.Code, e.Message)
		p.Errors = e.Fields
		var cause error
		if e.Err != nil || p.Status >= 500 {
			cause = err
		}
		telemetry.FromContext(r.Context()).Fail(p.Type, cause)
	} else {
		p = NewProblem(quire.EINTERNAL, "The server could not complete the request. Quote the request id when reporting it.")
		telemetry.FromContext(r.Context()).Fail(p.Type, err)
	}
	p.Instance = r.URL.Path
	p.RequestID = RequestID(r)
	switch {
	case Retryable(code):
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		}
	case p.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", challenge(r))
	}
	WriteProblem(w, p)
}

// WriteProblem writes p, Bounded, with its status and the problem+json
// media type.
func WriteProblem(w http.ResponseWriter, p Problem) {
	body, _ := json.Marshal(p.Bounded()) // a Problem always marshals
	h := w.Header()
	h.Set("Content-Type", ProblemMediaType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(body)
}

// MethodNotAllowed writes the 405 problem with an Allow header listing allow.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	Error(w, r, quire.Errorf(quire.EMETHOD, "%s is not allowed here; allowed: %s.", r.Method, strings.Join(allow, ", ")))
}

// GatewayProblem is the API Gateway response template of a problem body for
// an error code: the same shape Error writes, filled by API Gateway's
// $context variables. detail is a template expression or a literal; status 0
// leaves the status out (for DEFAULT_4XX and DEFAULT_5XX, which cover many).
func GatewayProblem(code string, status int, detail string) string {
	s := ""
	if status != 0 {
		s = `"status":` + strconv.Itoa(status) + `,`
	}
	return `{"type":"` + ProblemType(code) + `","title":"` + Title(code) + `",` + s +
		`"detail":` + detail + `,"instance":"$context.path","request_id":"$context.requestId"}`
}
