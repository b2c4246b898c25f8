package telemetry

import (
	"context"
	"sync"
)

// Record gathers what one request did, for its line: the router, the
// handlers and the DynamoDB client add to it through the request's
// context, and the Lambda handler writes it when the request is answered.
// Its methods do nothing on a nil Record (a context without one), and are
// safe for concurrent use (a request may read DynamoDB concurrently).
type Record struct {
	mu      sync.Mutex
	version int
	problem string
	cause   error
	db      DynamoDB
	counts  map[string]int
}

// DynamoDB sums a request's calls to DynamoDB.
type DynamoDB struct {
	Calls     int     // operations called (a batch or a transaction is one)
	Retries   int     // attempts after each call's first
	Throttles int     // attempts refused for capacity
	Conflicts int     // attempts refused for a conflict with a transaction
	Units     float64 // read and write capacity units consumed
}

type recordKey struct{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// FromContext returns the Record of ctx, or nil.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// SetVersion notes the API version the request was served in.
func (r *Record) SetVersion(v int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version = v
}

// Fail notes the problem type the request was answered with and, for a
// failure worth a look (a server error, or a client error with an
// underlying cause), its cause. The first cause noted stays.
func (r *Record) Fail(problemType string, cause error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problem = problemType
	if r.cause == nil {
		r.cause = cause
	}
}

// Count adds one to a metric of the function: IdempotentReplays or
// FailedLogins.
func (r *Record) Count(metric string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[metric]++
}

// AddDynamoDB adds the figures of DynamoDB calls.
func (r *Record) AddDynamoDB(d DynamoDB) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.db.Calls += d.Calls
	r.db.Retries += d.Retries
	r.db.Throttles += d.Throttles
	r.db.Conflicts += d.Conflicts
	r.db.Units += d.Units
}

// Count adds one to a metric of the function in the Record of ctx.
func Count(ctx context.Context, metric string) { FromContext(ctx).Count(metric) }

// snapshot is a Record's content, read once.
type snapshot struct {
	version int
	problem string
	cause   error
	db      DynamoDB
	counts  map[string]int
}

func (r *Record) snapshot() snapshot {
	if r == nil {
		return snapshot{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return snapshot{r.version, r.problem, r.cause, r.db, r.counts}
}
