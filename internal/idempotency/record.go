package idempotency

import (
	"context"
	"errors"
	"time"
)

// DefaultTTL is how long a key's answer is kept, unless configured.
const DefaultTTL = 24 * time.Hour

// Response is an answer as sent: what a replay sends again. Header holds
// its headers by canonical name, as an http.Header does.
type Response struct {
	Status int
	Header map[string][]string
	Body   []byte
}

// Record is the first answer to a key, in its scope (the caller, the
// method and the path), with the fingerprint of the request it answered.
type Record struct {
	Scope       string
	Fingerprint string
	Response
	Expires time.Time
}

// Store finds records. Records are written by the operations themselves,
// in the transaction of their effect (see Pending).
type Store interface {
	// Get returns the record of scope, or nil when there is none or it has
	// expired.
	Get(ctx context.Context, scope string) (*Record, error)
	// Begin returns the pending record of a request with a key.
	Begin(scope, fingerprint string) *Pending
}

// Pending is a request with a key whose answer is not stored yet. The
// operation renders its answer before it commits, and passes the record of
// it (see Answer) to the store, which writes it in the same transaction as
// the effect, so that no failure can keep the effect without the record or
// the record without the effect.
type Pending struct {
	Scope       string
	Fingerprint string
	Expires     time.Time

	// The lookup of the key's record, running while the operation reads.
	found   *Record
	lookErr error
	looked  chan struct{}
}

// Lookup starts the read of the key's record in s, in the background: the
// operation's own reads overlap it, and Found waits for it.
func (p *Pending) Lookup(ctx context.Context, s Store) {
	p.looked = make(chan struct{})
	go func() {
		defer close(p.looked)
		p.found, p.lookErr = s.Get(ctx, p.Scope)
	}()
}

// Found waits for the lookup started by Lookup and returns the key's
// record, nil when it has none (or no lookup was started). An operation
// calls it before it commits: a key with a record is answered with it.
func (p *Pending) Found() (*Record, error) {
	if p.looked == nil {
		return nil, nil
	}
	<-p.looked
	return p.found, p.lookErr
}

// Unanswered waits for the lookup as Found does, and returns ErrRaced when
// the key has a record (the caller answers with it), the lookup's error,
// or nil: what an operation checks before it commits.
func (p *Pending) Unanswered() error {
	rec, err := p.Found()
	if err == nil && rec != nil {
		return ErrRaced
	}
	return err
}

// Answer returns the record of the pending request answered with resp, for
// the operation to commit in the transaction of its effect. It waits for
// the lookup as Found does, and returns ErrRaced when the key has a record
// already (the caller answers with it) or the lookup's error.
func (p *Pending) Answer(resp Response) (*Record, error) {
	if err := p.Unanswered(); err != nil {
		return nil, err
	}
	return &Record{Scope: p.Scope, Fingerprint: p.Fingerprint, Response: resp, Expires: p.Expires}, nil
}

// ErrRaced is what a transaction returns when another request with the
// same key committed first: the caller answers with that request's record.
var ErrRaced = errors.New("idempotency: another request with the same key committed first")

// ErrInFlight is what a transaction returns when another request with the
// same key is committing at the same time: retried in a moment, the request
// gets that request's answer.
var ErrInFlight = errors.New("idempotency: a request with the same key is committing")
