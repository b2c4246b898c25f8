package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// refusals are the 409s that no retry fixes, each with a type of its own.
var refusals = []string{quire.EINSUFFICIENTFUNDS, quire.EACCOUNTCLOSED, quire.EBALANCELIMIT, quire.EBALANCENOTZERO, quire.ECARTEMPTY,
	quire.EPRODUCTUNAVAILABLE, quire.ECARTFULL, quire.EEMAILTAKEN}

// TestRetryAfter: a collision with another request (ECONFLICT), too many
// requests and a service unavailable get Retry-After: 1, or the error's own
// wait; the refusals, also 409, and every other problem do not. A
// Retry-After the handler set stays.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		header string // a Retry-After set before Error, or ""
		status int
		typ    string
		retry  string
	}{
		{"collision", quire.Errorf(quire.ECONFLICT, "The user 2 changed during the request; retry it."), "", 409, quire.ECONFLICT, "1"},
		{"key still committing", fmt.Errorf("pay: %w", inFlight(nil)), "", 409, quire.ECONFLICT, "1"},
		{"unavailable", quire.Errorf(quire.EUNAVAILABLE, "The database does not answer."), "", 503, quire.EUNAVAILABLE, "1"},
		{"unavailable, handler's Retry-After", quire.Errorf(quire.EUNAVAILABLE, "The database does not answer."), "5", 503, quire.EUNAVAILABLE, "5"},
		{"deadline", fmt.Errorf("get user 2: %w", context.DeadlineExceeded), "", 503, quire.EUNAVAILABLE, "1"},
		{"short balance", quire.Errorf(quire.EINSUFFICIENTFUNDS, "The balance is 4.02, short of the 12.99 to pay: the shop must fund the account first."), "", 409, quire.EINSUFFICIENTFUNDS, ""},
		{"closed account", quire.Errorf(quire.EACCOUNTCLOSED, "The account 2 is closed: it cannot pay."), "", 409, quire.EACCOUNTCLOSED, ""},
		{"balance cap", quire.Errorf(quire.EBALANCELIMIT, "A balance may not exceed 1000000.00."), "", 409, quire.EBALANCELIMIT, ""},
		{"empty cart", quire.Errorf(quire.ECARTEMPTY, "The cart is empty."), "", 409, quire.ECARTEMPTY, ""},
		{"discontinued book", quire.Errorf(quire.EPRODUCTUNAVAILABLE, "The product 4 is DISCONTINUED."), "", 409, quire.EPRODUCTUNAVAILABLE, ""},
		{"full cart", quire.Errorf(quire.ECARTFULL, "A cart holds at most 50 different books."), "", 409, quire.ECARTFULL, ""},
		{"taken email", quire.Errorf(quire.EEMAILTAKEN, "Another user has the email a@example.com."), "", 409, quire.EEMAILTAKEN, ""},
		{"throttled", quire.Errorf(quire.ETHROTTLED, "Too many requests."), "", 429, quire.ETHROTTLED, "1"},
		{"locked login", &quire.Error{Code: quire.ETHROTTLED, Message: "Too many failed logins.", RetryAfter: 840}, "", 429, quire.ETHROTTLED, "840"},
		{"internal", fmt.Errorf("boom"), "", 500, quire.EINTERNAL, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if tc.header != "" {
				rec.Header().Set("Retry-After", tc.header)
			}
			Error(rec, httptest.NewRequest("POST", "/pay", nil), tc.err)
			p := problemOf(t, rec)
			if rec.Code != tc.status || p.Type != ProblemType(tc.typ) || rec.Header().Get("Retry-After") != tc.retry {
				t.Errorf("%d %s, Retry-After %q; want %d %s, Retry-After %q",
					rec.Code, p.Type, rec.Header().Get("Retry-After"), tc.status, ProblemType(tc.typ), tc.retry)
			}
		})
	}
}

// TestOnlyCollisionsLimitsAndUnavailableRetry: of every code, only
// ECONFLICT, ETHROTTLED and the 503s are retryable, and every refusal is a
// 409 with its own type and title.
func TestOnlyCollisionsLimitsAndUnavailableRetry(t *testing.T) {
	for _, code := range Codes() {
		rec := httptest.NewRecorder()
		Error(rec, httptest.NewRequest("POST", "/pay", nil), quire.Errorf(code, "Something."))
		want := code == quire.ECONFLICT || code == quire.ETHROTTLED || code == quire.EUNAVAILABLE
		if got := rec.Header().Get("Retry-After") != ""; got != want || Retryable(code) != want {
			t.Errorf("%s: Retry-After %v, Retryable %v; want %v", code, got, Retryable(code), want)
		}
	}
	titles := map[string]bool{Title(quire.ECONFLICT): true}
	for _, code := range refusals {
		if !slices.Contains(Codes(), code) || Status(code) != http.StatusConflict || titles[Title(code)] {
			t.Errorf("refusal %s: in the table %v, status %d, title %q (taken: %v)",
				code, slices.Contains(Codes(), code), Status(code), Title(code), titles[Title(code)])
		}
		titles[Title(code)] = true
	}
}

// laterRecords is an idempotency store whose record of every scope appears
// after the first read: the key's first request committed meanwhile.
type laterRecords struct {
	rec   idempotency.Record
	reads int
}

func (s *laterRecords) Get(context.Context, string) (*idempotency.Record, error) {
	if s.reads++; s.reads == 1 {
		return nil, nil
	}
	return &s.rec, nil
}

func (s *laterRecords) Begin(scope, fingerprint string) *idempotency.Pending {
	return &idempotency.Pending{Scope: scope, Fingerprint: fingerprint}
}

// TestRefusalReplaysACommittedKey: a request with a key that is refused
// by the state the key's first request left (its cart just paid) gets the
// first's answer, not the refusal; a collision stays a retryable 409.
func TestRefusalReplaysACommittedKey(t *testing.T) {
	rt := routes.Route{Method: "POST", Path: "/pay", Idempotency: routes.KeyRequired}
	first := idempotency.Response{Status: 201, Header: http.Header{"Content-Type": {MediaTypeJSON}}, Body: []byte(`{"id":1}`)}
	for _, tc := range []struct {
		name  string
		err   error
		reads int
		code  int
		body  string
	}{
		{"refused", quire.Errorf(quire.ECARTEMPTY, "The cart is empty."), 2, 201, `{"id":1}`},
		{"collided", quire.Errorf(quire.ECONFLICT, "Other requests are changing the same data."), 1, 409, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records := &laterRecords{rec: idempotency.Record{
				Fingerprint: idempotency.Fingerprint("POST", "/pay", routes.Versions[0], nil), Response: first,
			}}
			r := httptest.NewRequest("POST", "/pay", strings.NewReader(""))
			r.Header.Set("Idempotency-Key", "k1")
			rec := httptest.NewRecorder()
			err := idempotent(rec, wrap(r), rt, records, func(http.ResponseWriter, *Request) error { return tc.err })
			if err != nil {
				Error(rec, r, err)
			}
			if rec.Code != tc.code || records.reads != tc.reads || tc.body != "" && rec.Body.String() != tc.body {
				t.Errorf("%d %s after %d reads of the record; want %d %s after %d", rec.Code, rec.Body, records.reads, tc.code, tc.body, tc.reads)
			}
			if replayed := rec.Header().Get(ReplayedHeader) == "true"; replayed != (tc.code == 201) {
				t.Errorf("%s: %q", ReplayedHeader, rec.Header().Get(ReplayedHeader))
			}
			if retry := rec.Header().Get("Retry-After"); (retry != "") != (tc.code == 409) {
				t.Errorf("Retry-After %q on a %d", retry, rec.Code)
			}
		})
	}
}

// TestProblemsAreBounded: what a problem quotes of a request is cut to the
// bounds the documents give (a member's name in a pointer, a header's value
// in a detail), and errors past MaxFieldErrors are left out.
func TestProblemsAreBounded(t *testing.T) {
	r := httptest.NewRequest("POST", "/users", strings.NewReader(`{"`+strings.Repeat("é", 3*MaxPointerLen)+`": 1}`))
	r.Header.Set("Content-Type", "application/json")
	var body struct {
		Email string `json:"email"`
	}
	many := make([]quire.FieldError, MaxFieldErrors+4)
	for i := range many {
		many[i] = quire.FieldError{Pointer: fmt.Sprintf("/f%d", i), Detail: "is wrong"}
	}
	for _, err := range []error{
		Decode(r, &body),
		quire.Errorf(quire.EMEDIATYPE, "The body must be application/json, not %s.", strings.Repeat("x", 3*MaxDetailLen)),
		quire.Invalid(many...),
	} {
		w := httptest.NewRecorder()
		Error(w, r, err)
		var p Problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(p.Detail); n > MaxDetailLen || n == 0 || len(p.Errors) > MaxFieldErrors {
			t.Errorf("%v: a detail of %d characters, %d errors", err, n, len(p.Errors))
		}
		for _, e := range p.Errors {
			if utf8.RuneCountInString(e.Pointer) > MaxPointerLen || utf8.RuneCountInString(e.Detail) > MaxDetailLen {
				t.Errorf("%v: an error of a pointer of %d characters", err, utf8.RuneCountInString(e.Pointer))
			}
		}
	}
	if many[0].Pointer != "/f0" || len(many) != MaxFieldErrors+4 {
		t.Errorf("the error's own fields changed: %v", many[:1])
	}
}
