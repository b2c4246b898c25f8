// Package quire holds what every part of Quire shares about the business: the
// error type with its codes, exact money and resource ids, and the shape of
// every write (read, decide, commit, and again after a stale read: Retry).
// It depends on nothing but the standard library.
package quire

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status and one problem type in package
// rest; a plain error is an internal error.
//
// ECONFLICT is a collision with another request (the data changed while
// the request ran, or an idempotency key's first request is committing):
// the same request sent again in a moment can succeed. The refusals after
// it (EINSUFFICIENTFUNDS to EEMAILTAKEN) are conflicts with the current
// state too, but sending the same request again does not help until the
// state changes: each has a code of its own, so that a client can tell it
// from a collision and say what to do.
const (
	EINVALID            = "invalid"             // the request is malformed or fails validation
	EUNAUTHORIZED       = "unauthorized"        // no valid credentials: a missing, invalid or expired token, or a failed login
	EFORBIDDEN          = "forbidden"           // valid credentials without the role the route needs
	ENOTFOUND           = "not-found"           // the resource does not exist
	ECONFLICT           = "conflict"            // another request changed the same data meanwhile; retry the same request
	EINSUFFICIENTFUNDS  = "insufficient-funds"  // the balance is short of the total to pay; the shop funds accounts
	EACCOUNTCLOSED      = "account-closed"      // the account is closed (or gone): it takes no deposits, pays nothing and closes once
	EBALANCELIMIT       = "balance-limit"       // a deposit would take the balance past its cap
	EBALANCENOTZERO     = "balance-not-zero"    // one's own account is deleted only once its balance is zero
	ECARTEMPTY          = "cart-empty"          // there is nothing in the cart to pay
	EPRODUCTUNAVAILABLE = "product-unavailable" // a book is not for sale (discontinued, archived or gone)
	ECARTFULL           = "cart-full"           // the cart would pass its limit of copies of a book or of different books
	EEMAILTAKEN         = "email-taken"         // another user has the email
	EWRONGPASSWORD      = "wrong-password"      // the current password given to change the email or password is wrong
	EKEYREUSED          = "key-reused"          // an idempotency key comes again with another request
	EPRECONDITION       = "precondition"        // an If-Match or If-None-Match condition of a write failed
	ETOOLARGE           = "too-large"           // the request body is over the size limit
	EMEDIATYPE          = "media-type"          // the request body is not JSON
	EMETHOD             = "method"              // the path exists but not with this method
	ENOTACCEPTABLE      = "not-acceptable"      // the Accept header takes no representation the route has
	EGONE               = "gone"                // the API version asked for is past its sunset
	EUNAVAILABLE        = "unavailable"         // a dependency does not answer; retry later
	ETHROTTLED          = "throttled"           // too many requests; retry later
	EGATEWAY            = "gateway"             // the gateway could not get an answer from a function
	EINTERNAL           = "internal"            // anything else: a bug or an unexpected failure
)

// FieldError says what is wrong with one field of a request body. Pointer is
// a JSON Pointer (RFC 6901) into the body, such as "/email".
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// Error is an error a client may see: Code picks the status, Message is safe
// to show, Fields lists invalid fields, and Err (never shown) is the cause.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	Err     error
	// RetryAfter, when set, is how many seconds a retry should wait
	// (Retry-After); a retryable error without it says 1.
	RetryAfter int
}

func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound is what a store returns for a read of what it does not hold,
// named by what ("user 42") for the log: ENOTFOUND, whose message the
// domain says in its own words (see Reword); a general one otherwise.
func NotFound(what string) *Error {
	return &Error{Code: ENOTFOUND, Message: "Nothing is stored under this id.", Err: errors.New(what + " is not stored")}
}

// Busy is the error of a dependency that does not answer now (throttled,
// failing or out of reach: cause says which and what was read through it,
// for the log): EUNAVAILABLE, which the same request gets past after
// Retry-After.
func Busy(cause error) *Error {
	return &Error{Code: EUNAVAILABLE, Message: "The service is busy; retry after the time in Retry-After.", Err: cause}
}

// Reword returns err as an *Error of code with the message format says
// when err has that code (a store's outcome, said in the domain's words),
// and err as it is otherwise.
func Reword(err error, code, format string, args ...any) error {
	if ErrorCode(err) != code {
		return err
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// Invalid returns an EINVALID error listing the invalid fields.
func Invalid(fields ...FieldError) *Error {
	return &Error{Code: EINVALID, Message: "The request body has invalid fields.", Fields: fields}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return EINTERNAL
}
