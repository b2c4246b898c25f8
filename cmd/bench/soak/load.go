package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// op is one logical operation: a request sent until it gets a final
// answer or its client gives up, with what each try got.
type op struct {
	kind   string // the route, such as "POST /pay"
	method string
	path   string
	body   string
	token  string // "" for a public route
	key    string // the Idempotency-Key of a write, "" for a read
	user   quire.ID
	amount quire.Money // a deposit's

	tries []try
	final bool          // the last try's answer is final
	took  time.Duration // from the first try's start to the last answer
}

// try is one HTTP request of an op and its answer.
type try struct {
	status     int    // 0: no answer (err)
	retryAfter string // the Retry-After header
	problem    string // the type of a problem answer
	requestID  string // the gateway's X-Amzn-Requestid
	body       []byte // kept for writes and for 5xx
	err        error
	took       time.Duration
}

// last returns the op's last try.
func (o *op) last() try { return o.tries[len(o.tries)-1] }

// retryable reports whether a client should send the request again: no
// answer came, or a 503, or an answer that says when to retry (409
// conflict, 429).
func (t try) retryable() bool {
	return t.err != nil || t.status == http.StatusServiceUnavailable || t.retryAfter != ""
}

// kinds is the mix of operations, with their weights.
var kinds = []struct {
	name   string
	weight int
}{
	{"GET /products", 8}, {"GET /products/{id}", 8}, {"GET /users/{id}", 8}, {"GET /cart", 8},
	{"GET /orders", 8}, {"GET /config", 5}, {"GET /landing", 5},
	{"POST /cart", 16}, {"POST /pay", 9}, {"POST /products/{id}/buy", 9},
	{"POST /users/{id}/deposit", 12}, {"POST /users", 4},
}

// The demo books on sale (4 is discontinued: a few purchases of it are
// refused, as a client's would be).
var onSale = []quire.ID{1, 2, 3, 5}

// plan draws o.requests operations from the mix with o.seed, each acting
// as a random customer of e: the same seed gives the same operations.
func plan(o options, e *env) []*op {
	r := rand.New(rand.NewPCG(o.seed, 0x50a6))
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	ops := make([]*op, o.requests)
	for i := range ops {
		n := r.IntN(total)
		kind := kinds[0].name
		for _, k := range kinds {
			if n < k.weight {
				kind = k.name
				break
			}
			n -= k.weight
		}
		c := e.customers[r.IntN(len(e.customers))]
		p := &op{kind: kind, method: "GET", token: c.token, user: c.id}
		book := onSale[r.IntN(len(onSale))]
		if r.IntN(50) == 0 {
			book = 4
		}
		switch kind {
		case "GET /products":
			p.path = "/products"
		case "GET /products/{id}":
			p.path = fmt.Sprintf("/products/%d", 1+r.IntN(5))
		case "GET /users/{id}":
			p.path = fmt.Sprintf("/users/%d", c.id)
		case "GET /cart", "GET /orders", "GET /config", "GET /landing":
			p.path = strings.TrimPrefix(kind, "GET ")
		case "POST /cart":
			p.path, p.body = "/cart", fmt.Sprintf(`{"product_id":%d,"quantity":%d}`, book, 1+r.IntN(2))
		case "POST /pay":
			p.path = "/pay"
		case "POST /products/{id}/buy":
			p.path, p.body = fmt.Sprintf("/products/%d/buy", book), fmt.Sprintf(`{"quantity":%d}`, 1+r.IntN(2))
		case "POST /users/{id}/deposit":
			p.amount = quire.Money(5_00 + r.IntN(45_00))
			p.path, p.body = fmt.Sprintf("/users/%d/deposit", c.id), fmt.Sprintf(`{"amount":%s}`, p.amount)
			p.token = e.admin.token // money comes from the back office, never from its customer
		case "POST /users":
			p.path, p.token, p.user = "/users", "", 0
			p.body = fmt.Sprintf(`{"email":"soak-%d-%d@example.com","first_name":"New","last_name":"Reader %d","password":"soak passphrase %d"}`,
				o.seed, i, i, i)
		}
		if kind == "GET /landing" {
			p.token = ""
		}
		if strings.HasPrefix(kind, "POST ") {
			p.method = "POST"
			p.key = fmt.Sprintf("soak-%d-%d", o.seed, i)
		}
		ops[i] = p
	}
	return ops
}

// retryPolicy is how a client retries: at most tries tries; before each
// retry it waits what Retry-After says, at most maxWait, plus up to a
// quarter of maxWait of jitter.
type retryPolicy struct {
	tries   int
	maxWait time.Duration
}

// wait returns how long to wait after t, the try number n, before the
// next: Retry-After (in seconds or as a date) capped at maxWait, or,
// without one, maxWait/8 doubled with each try up to maxWait; plus jitter.
func (p retryPolicy) wait(t try, n int, r *rand.Rand) time.Duration {
	d := min(p.maxWait/8<<min(n-1, 10), p.maxWait)
	if s, err := strconv.Atoi(t.retryAfter); err == nil && s >= 0 {
		d = min(time.Duration(s)*time.Second, p.maxWait)
	} else if at, err := http.ParseTime(t.retryAfter); err == nil {
		d = min(max(time.Until(at), 0), p.maxWait)
	}
	if j := p.maxWait / 4; j > 0 {
		d += rand.N(j)
	}
	return d
}

// send runs ops on clients concurrent clients against the API at base and
// returns how long it took.
func send(ctx context.Context, base string, ops []*op, clients int, seed uint64, p retryPolicy) time.Duration {
	hc := &http.Client{
		Timeout:   30 * time.Second, // longer than the gateway's function timeout
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, IdleConnTimeout: 30 * time.Second},
	}
	defer hc.CloseIdleConnections()
	queue := make(chan *op)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		r := rand.New(rand.NewPCG(seed, uint64(i)+1))
		wg.Go(func() {
			for o := range queue {
				p.do(ctx, hc, base, o, r)
			}
		})
	}
	for _, o := range ops {
		select {
		case queue <- o:
		case <-ctx.Done():
		}
	}
	close(queue)
	wg.Wait()
	return time.Since(start)
}

// do sends o until it gets a final answer, or p.tries times.
func (p retryPolicy) do(ctx context.Context, hc *http.Client, base string, o *op, r *rand.Rand) {
	if ctx.Err() != nil {
		return
	}
	start := time.Now()
	defer func() { o.took = time.Since(start) }()
	for n := 1; ; n++ {
		t := o.send(ctx, hc, base)
		o.tries = append(o.tries, t)
		if !t.retryable() {
			o.final = true
			return
		}
		if n == p.tries {
			return
		}
		select {
		case <-time.After(p.wait(t, n, r)):
		case <-ctx.Done():
			return
		}
	}
}

// send makes one try of o.
func (o *op) send(ctx context.Context, hc *http.Client, base string) try {
	var body io.Reader
	if o.body != "" {
		body = strings.NewReader(o.body)
	}
	req, err := http.NewRequestWithContext(ctx, o.method, base+o.path, body)
	if err != nil {
		return try{err: err}
	}
	if o.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	if o.key != "" {
		req.Header.Set("Idempotency-Key", o.key)
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return try{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	t := try{
		status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"),
		requestID: resp.Header.Get("X-Amzn-Requestid"), took: time.Since(start),
	}
	if err != nil {
		return try{err: fmt.Errorf("read the answer: %w", err), took: t.took}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.problem = problemType(b)
	}
	if o.method != "GET" || t.status >= 500 {
		t.body = b
	}
	return t
}
