// Package ddbfault puts a misbehaving network between DynamoDB's clients and a
// real DynamoDB (DynamoDB Local in tests and `make run`): an HTTP proxy that
// forwards every call and, where a rule says so, throttles it, fails it with
// a server error, delays it, resets its connection, or forwards it and then
// loses the answer. DynamoDB Local never throttles or fails, so this is how
// tests, the soak benchmark and a developer see what Quire does when DynamoDB
// does.
//
// Faults are chosen per call, by operation (the X-Amz-Target of the request)
// and table (every table the request body names), with a probability or for
// the first n matching calls. A refused connection cannot be chosen per call,
// as no request has arrived yet: Refuse closes the proxy's listener instead.
//
// DynamoDB Local also runs one transaction at a time, so that its callers
// never meet what DynamoDB does to concurrent ones. A Conflict rule
// emulates it: the proxy holds every TransactWriteItems for the rule's
// Delay (about what a transaction takes on DynamoDB) before forwarding it,
// its items (table and key; Put, Update, Delete and ConditionCheck alike)
// in flight meanwhile (with no Delay, until DynamoDB answers it), and
// answers at once, without forwarding:
//   - a TransactWriteItems with an item in flight in another one:
//     TransactionCanceledException, with the reason TransactionConflict for
//     those items and None for the others;
//   - a PutItem, UpdateItem or DeleteItem of an item in flight in a
//     transaction: TransactionConflictException;
//   - a TransactGetItems with an item in flight in a transaction or a
//     single write: TransactionCanceledException, as above.
//
// Other reads and batches never conflict. Items are compared by table and
// key; a Put names its item whole, so the proxy asks DynamoDB for the
// table's key schema (DescribeTable, once per table).
package ddbfault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is a fault the proxy injects.
type Kind string

// The faults. Throttle, Throughput, Internal, TransactionThrottle,
// ExpiredIterator and Trimmed (for a stream's GetRecords: an iterator
// unused for 15 minutes, records older than 24 hours, which no test waits
// for) answer at once with DynamoDB's own error responses and never
// reach DynamoDB; Delay waits, then forwards; Reset drops the connection
// before forwarding; Lost forwards (DynamoDB applies the call) and then
// drops the connection before the answer; Stale answers an eventually
// consistent GetItem or BatchGetItem without its items, as a read just
// after their write may be; Conflict answers a call that meets a
// transaction in flight as DynamoDB does (see the package comment), and a
// call that meets none is forwarded (a TransactWriteItems after
// Rule.Delay).
const (
	Throttle            Kind = "throttle"    // 400 ThrottlingException
	Throughput          Kind = "throughput"  // 400 ProvisionedThroughputExceededException
	Internal            Kind = "internal"    // 500 InternalServerError
	TransactionThrottle Kind = "transaction" // 400 TransactionCanceledException, every item ThrottlingError
	Delay               Kind = "delay"       // forwarded after Rule.Delay
	Reset               Kind = "reset"       // connection reset, the call not forwarded
	Lost                Kind = "lost"        // forwarded and applied, then the connection reset
	Stale               Kind = "stale"       // an eventually consistent read answered as if no item were there yet
	Conflict            Kind = "conflict"    // 400 TransactionConflictException, or TransactionCanceledException with TransactionConflict
	ExpiredIterator     Kind = "expired"     // 400 ExpiredIteratorException: a stream's iterator unused for 15 minutes
	Trimmed             Kind = "trimmed"     // 400 TrimmedDataAccessException: the records after a stream's iterator gone, after 24 hours
	noFault             Kind = ""            // forwarded as it is
)

const (
	maxBody       = 16 << 20                    // DynamoDB's largest request is a 4 MB transaction
	target        = "DynamoDB_20120810."        // the X-Amz-Target prefix of every operation
	streamsTarget = "DynamoDBStreams_20120810." // and of every operation on a stream
)

// Kinds lists every fault a rule can name.
var Kinds = []Kind{Throttle, Throughput, Internal, TransactionThrottle, Delay, Reset, Lost, Stale, Conflict, ExpiredIterator, Trimmed}

// Rule says which calls get a fault. A call matches when Operation is "" or
// its operation ("GetItem"), and Table is "" or a suffix of one of the
// tables it names (so "users" matches "quire-users" and a test's
// "TestX-1a2b3c4d-users"). A matching call gets the fault with Probability;
// when Count is set, only the first Count matching calls do (each still with
// Probability, where that is set). A Conflict rule is not chosen per call:
// every call it matches takes part in the emulation of conflicts, and its
// Probability and Count apply to the conflicts it finds (a conflict not
// injected lets the call through).
type Rule struct {
	Fault       Kind
	Operation   string
	Table       string
	Probability float64
	Count       int
	// Delay is how long a Delay fault waits before forwarding, and how
	// long a Conflict rule holds a transaction, its items in flight,
	// before forwarding it. A call whose client gives up meanwhile is not
	// forwarded.
	Delay time.Duration
}

func (r Rule) String() string {
	s := string(r.Fault)
	if r.Fault == Delay || r.Delay > 0 {
		s += " " + r.Delay.String()
	}
	if r.Probability > 0 {
		s += fmt.Sprintf(" %g%%", r.Probability*100)
	}
	if r.Count > 0 {
		s += fmt.Sprintf(" x%d", r.Count)
	}
	if r.Operation != "" {
		s += " " + r.Operation
	}
	if r.Table != "" {
		s += " " + r.Table
	}
	return s
}

func (r Rule) matches(op string, tables []string) bool {
	if r.Operation != "" && r.Operation != op {
		return false
	}
	if r.Table == "" {
		return true
	}
	for _, t := range tables {
		if strings.HasSuffix(t, r.Table) {
			return true
		}
	}
	return false
}

// Proxy is a running fault proxy in front of one DynamoDB endpoint.
type Proxy struct {
	upstream string
	client   *http.Client
	srv      *http.Server

	mu       sync.Mutex
	ln       net.Listener
	addr     string
	rules    []rule
	rand     *rand.Rand
	injected map[Kind]int
	calls    map[string]int
	inFlight flights             // the items of the calls in flight, for Conflict rules
	schemas  map[string][]string // table name -> names of its key attributes, as DynamoDB described them

	conns atomic.Int64 // the connections clients have opened
}

type rule struct {
	Rule
	left int // calls still to fault when Count is set
}

// Start runs a proxy on a free loopback port that forwards to upstream
// ("http://127.0.0.1:8000"), with rules. seed makes the random choices
// repeatable. Close stops it.
func Start(upstream string, seed uint64, rules ...Rule) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ddbfault: listen: %w", err)
	}
	p := &Proxy{
		upstream: strings.TrimSuffix(upstream, "/"),
		client: &http.Client{Transport: &http.Transport{
			Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second,
		}},
		ln:       ln,
		addr:     ln.Addr().String(),
		rand:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		injected: map[Kind]int{},
		calls:    map[string]int{},
		inFlight: flights{transactions: map[string]int{}, singles: map[string]int{}},
		schemas:  map[string][]string{},
	}
	p.Set(rules...)
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.conns.Add(1)
		}
	}}
	go func() { _ = p.srv.Serve(ln) }() // ErrServerClosed once Close stops it
	return p, nil
}

// URL is the proxy's endpoint, for dynamo.Config.Endpoint.
func (p *Proxy) URL() string { return "http://" + p.addr }

// Connections returns how many connections clients have opened to the
// proxy: a client that keeps its connections alive opens one per call it
// makes at once, and no more.
func (p *Proxy) Connections() int { return int(p.conns.Load()) }

// Set replaces the rules; counts start again.
func (p *Proxy) Set(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = p.rules[:0]
	for _, r := range rules {
		p.rules = append(p.rules, rule{Rule: r, left: r.Count})
	}
}

// Injected returns how many calls got each fault so far.
func (p *Proxy) Injected() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Kind]int, len(p.injected))
	for k, n := range p.injected {
		out[k] = n
	}
	return out
}

// Calls returns how many calls of an operation arrived, faulted or not.
func (p *Proxy) Calls(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[op]
}

// Refuse closes the proxy's listener, so that new connections are refused
// (connections already open stay), until Accept opens it again on the same
// port.
func (p *Proxy) Refuse() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return nil
	}
	err := p.ln.Close()
	p.ln = nil
	p.srv.SetKeepAlivesEnabled(false) // open connections close after their next answer
	return err
}

// Accept undoes Refuse.
func (p *Proxy) Accept() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("ddbfault: listen again on %s: %w", p.addr, err)
	}
	p.ln = ln
	p.srv.SetKeepAlivesEnabled(true)
	go func() { _ = p.srv.Serve(ln) }() // ErrServerClosed once Refuse or Close stops it
	return nil
}

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln = nil
	return p.srv.Close()
}

// choose returns the fault of a call and, for a delay, how long.
func (p *Proxy) choose(op string, tables []string, consistent bool) (Kind, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[op]++
	for i := range p.rules {
		r := &p.rules[i]
		if r.Fault == Conflict || !r.matches(op, tables) || r.Count > 0 && r.left == 0 {
			continue
		}
		if r.Probability > 0 && p.rand.Float64() >= r.Probability {
			continue
		}
		if r.Fault == TransactionThrottle && op != "TransactWriteItems" && op != "TransactGetItems" {
			continue
		}
		if r.Fault == Stale && (op != "GetItem" && op != "BatchGetItem" || consistent) {
			continue
		}
		if r.Count > 0 {
			r.left--
		}
		p.injected[r.Fault]++
		return r.Fault, r.Delay
	}
	return noFault, 0
}

// ServeHTTP forwards one DynamoDB call, or fails it as the rules say.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return // the client went away
	}
	op := strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("X-Amz-Target"), target), streamsTarget)
	tables, items := parse(body)
	fault, delay := p.choose(op, tables, bytes.Contains(body, []byte(`"ConsistentRead":true`)))
	switch fault {
	case Throttle:
		writeError(w, http.StatusBadRequest, "ThrottlingException", "Rate of requests exceeds the allowed throughput.", nil)
		return
	case Throughput:
		writeError(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded.", nil)
		return
	case Internal:
		writeError(w, http.StatusInternalServerError, "InternalServerError", "Internal server error", nil)
		return
	case TransactionThrottle:
		reasons := make([]map[string]string, max(items, 1))
		for i := range reasons {
			reasons[i] = map[string]string{"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity of your table or index."}
		}
		writeError(w, http.StatusBadRequest, "TransactionCanceledException",
			"Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError]", reasons)
		return
	case ExpiredIterator:
		writeError(w, http.StatusBadRequest, "ExpiredIteratorException", "Iterator expired. The iterator was created more than 15 minutes ago.", nil)
		return
	case Trimmed:
		writeError(w, http.StatusBadRequest, "TrimmedDataAccessException", "The data you are trying to access has been trimmed.", nil)
		return
	case Reset:
		reset(w)
		return
	case Delay:
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	leave, answered := p.enter(w, r, op, tables, body)
	if answered {
		return
	}
	defer leave()
	resp, err := p.forward(r.Context(), r, body)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "ddbfault: upstream: "+err.Error(), nil)
		return
	}
	if fault == Lost {
		reset(w)
		return
	}
	if fault == Stale && resp.status == http.StatusOK {
		resp.body = unseen(resp.body)
		resp.header.Del("X-Amz-Crc32")
	}
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.status)
	w.Write(resp.body)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// forward makes the call upstream and reads its whole answer, so that a
// Lost fault drops an answer DynamoDB has given.
func (p *Proxy) forward(ctx context.Context, r *http.Request, body []byte) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	h.Del("Content-Length")
	return &response{status: resp.StatusCode, header: h, body: b}, nil
}

// unseen returns a read's answer without its items, as an eventually
// consistent read may answer just after they were written.
func unseen(body []byte) []byte {
	var out map[string]json.RawMessage
	if json.Unmarshal(body, &out) != nil {
		return body
	}
	delete(out, "Item")
	if _, ok := out["Responses"]; ok {
		out["Responses"] = json.RawMessage("{}")
	}
	b, err := json.Marshal(out)
	if err != nil {
		return body
	}
	return b
}

// reset ends the connection with a TCP RST: the client's read fails with
// "connection reset by peer" and no answer.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a connection that will not linger resets at once; one that does still closes
	}
	conn.Close()
}

// writeError answers as DynamoDB does: JSON 1.0 with the error's type.
func writeError(w http.ResponseWriter, status int, code, message string, reasons []map[string]string) {
	body := map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": message}
	if reasons != nil {
		body["CancellationReasons"] = reasons
	}
	b, _ := json.Marshal(body) // maps of strings always marshal
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "ddbfault")
	w.WriteHeader(status)
	w.Write(b)
}

// parse returns the tables a DynamoDB request body names and, for a
// transaction, its number of items. A body it cannot read names none.
func parse(body []byte) (tables []string, items int) {
	var req struct {
		TableName     string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, 0
	}
	if req.TableName != "" {
		tables = append(tables, req.TableName)
	}
	for t := range req.RequestItems {
		tables = append(tables, t)
	}
	for _, it := range req.TransactItems {
		for _, op := range it {
			tables = append(tables, op.TableName)
		}
	}
	return tables, len(req.TransactItems)
}
