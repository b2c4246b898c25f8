package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// ReplayedHeader marks an answer sent again for a known idempotency key.
const ReplayedHeader = "Idempotent-Replayed"

// The two headers a key may come in, with the same meaning.
const (
	KeyHeader    = "Idempotency-Key"
	AltKeyHeader = "X-Idempotency-Key"
)

// MaxKeyLen bounds an idempotency key, in bytes.
const MaxKeyLen = 255

// IdempotencyKey returns the idempotency key of a request's headers and whether it has
// one. A key is 1 to MaxKeyLen printable ASCII characters; both headers may
// be sent only with the same value. Anything else is EINVALID.
func IdempotencyKey(h http.Header) (string, bool, error) {
	var key string
	for _, name := range []string{KeyHeader, AltKeyHeader} {
		vs := h.Values(name)
		switch {
		case len(vs) == 0:
			continue
		case len(vs) > 1:
			return "", false, quire.Errorf(quire.EINVALID, "Send one %s header, not %d.", name, len(vs))
		}
		if err := checkKey(name, vs[0]); err != nil {
			return "", false, err
		}
		if key != "" && key != vs[0] {
			return "", false, quire.Errorf(quire.EINVALID, "The %s and %s headers differ; send one key.", KeyHeader, AltKeyHeader)
		}
		key = vs[0]
	}
	return key, key != "", nil
}

func checkKey(name, v string) error {
	if v == "" || len(v) > MaxKeyLen {
		return quire.Errorf(quire.EINVALID, "The %s header must be 1 to %d characters.", name, MaxKeyLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return quire.Errorf(quire.EINVALID, "The %s header must be printable ASCII; byte %d is not.", name, i+1)
		}
	}
	return nil
}

// keyScope is whose keys a request's key is among: its caller's, or with
// no caller, on a route with a KeyScope, the value of that member of body
// (sign-up's email), in lower case. A body without it scopes nothing the
// handler takes: it refuses the body, and a refusal is not recorded.
func keyScope(r *Request, rt routes.Route, body []byte) string {
	caller := r.Caller.ID
	if caller != 0 || rt.KeyScope == "" {
		return caller.String()
	}
	var members map[string]json.RawMessage
	var v string
	if json.Unmarshal(body, &members) == nil && json.Unmarshal(members[rt.KeyScope], &v) == nil {
		return rt.KeyScope + ":" + strings.ToLower(v)
	}
	return rt.KeyScope + ":"
}

// idempotent serves a route that takes an idempotency key: without one, h
// runs as it is (unless the route requires one). With one, h runs with the
// pending record in its Request while the key's record is read in the
// background (h's reads overlap that read), and h's transaction, which
// writes the record, waits for it: an answer recorded for the key in the
// caller's scope is sent again instead, one recorded for another payload
// is 422. A refusal
// of h (a 409 that no retry fixes) is checked against the record once
// more, and the first answer replayed if the key got one meanwhile.
func idempotent(w http.ResponseWriter, r *Request, rt routes.Route, records idempotency.Store, h HandlerFunc) error {
	key, ok, err := IdempotencyKey(r.Header)
	switch {
	case err != nil:
		return err
	case !ok && rt.Idempotency == routes.KeyRequired:
		return quire.Errorf(quire.EINVALID, "%s %s needs an %s header, so that a retry cannot run it twice.",
			rt.Method, rt.Resource().Path, KeyHeader)
	case !ok:
		return h(w, r)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return &quire.Error{Code: quire.EINVALID, Message: "The request body could not be read.", Err: err}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	path := strings.TrimPrefix(r.URL.Path, r.prefix)
	scope := strings.Join([]string{keyScope(r, rt, body), r.Method, path, key}, " ")
	fingerprint := idempotency.Fingerprint(r.Method, path, r.Version, body)

	p := records.Begin(scope, fingerprint)
	p.Lookup(r.Context(), records)
	r.pending = p
	err = h(w, r)
	if err == nil {
		return nil
	}
	r.resp = idempotency.Response{} // kept for a write that did not commit
	// h's answer, an error, is not the key's when the key has a record.
	if rec, lerr := p.Found(); lerr != nil || rec != nil {
		if lerr != nil {
			return lerr
		}
		return replay(w, r, rec, fingerprint)
	}
	switch code := quire.ErrorCode(err); {
	case errors.Is(err, idempotency.ErrInFlight):
		return inFlight(err)
	case errors.Is(err, idempotency.ErrRaced):
		rec, err := records.Get(r.Context(), scope)
		if err != nil || rec == nil {
			return inFlight(err)
		}
		return replay(w, r, rec, fingerprint)
	case Status(code) == http.StatusConflict && !Retryable(code):
		// The state that refuses the request (an empty cart, a short
		// balance) may be the effect of the key's first request, which
		// committed while this one ran: then the answer is the first's.
		// Should the record not be read, the refusal stands.
		if rec, gerr := records.Get(r.Context(), scope); gerr == nil && rec != nil {
			return replay(w, r, rec, fingerprint)
		}
	}
	return err
}

func replay(w http.ResponseWriter, r *Request, rec *idempotency.Record, fingerprint string) error {
	if rec.Fingerprint != fingerprint {
		return quire.Errorf(quire.EKEYREUSED, "The %s was used for another request; use a new key for a new request.", KeyHeader)
	}
	w.Header().Set(ReplayedHeader, "true")
	telemetry.Count(r.Context(), telemetry.IdempotentReplays)
	Write(w, rec.Response)
	return nil
}

func inFlight(cause error) error {
	return &quire.Error{Code: quire.ECONFLICT, Message: "A request with this key is still running; retry in a moment.", Err: cause}
}
