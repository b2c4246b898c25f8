// Command soak runs Quire under DynamoDB faults and checks that nothing is
// lost, doubled or answered with an unshaped error (`make soak`).
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT), creates fresh
// tables with the demo data and a few dozen customers of known balances,
// and puts a ddbfault proxy with a fault profile between every function's
// DynamoDB client and DynamoDB Local; seeding and the final checks go
// straight to DynamoDB Local. The whole API (every function and the
// authorizer, behind the local gateway) listens on a loopback port, and
// concurrent clients send it a mix of reads, cart additions, payments,
// deposits (by the admin: money comes from the back office) and sign-ups
// over real HTTP, each write with an Idempotency-Key. Clients retry as
// docs/faults.md tells a client to: on a 503, or an answer with
// Retry-After, they wait (at most -max-wait, plus jitter) and send the same
// request with the same key again, up to -tries times.
//
// It prints a Markdown report: requests by status, 5xx answers (any but a
// 503 with Retry-After fails the run), latencies per request and per
// operation with its retries, faults injected, operations left without a
// final answer, and invariants read from the tables: money is conserved,
// in total and per user; each payment made one order, once; the users are
// the seeded ones and the sign-ups; every answer agrees with its key's
// idempotency record. It exits with status 1 when any check fails; a soak
// that passes writes its report to docs/soak.md too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/quireapi/quire/cmd/bench/generated"
	"github.com/quireapi/quire/internal/testing/ddbfault"
)

// options are the command's flags.
type options struct {
	requests  int
	clients   int
	customers int
	profile   string
	seed      uint64
	tries     int
	maxWait   time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.requests, "requests", 3000, "logical operations to send (each with its retries)")
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients")
	flag.IntVar(&o.customers, "customers", 40, "customers to seed besides the demo's, with known balances")
	flag.StringVar(&o.profile, "profile", "flaky", "fault profile: a name from ddbfault.Profiles or rules (\"throttle 5%, lost 1% TransactWriteItems\")")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the operations' mix and of the proxy's fault choices")
	flag.IntVar(&o.tries, "tries", 8, "tries of one operation before its client gives up")
	flag.DurationVar(&o.maxWait, "max-wait", time.Second, "longest wait before a retry, whatever Retry-After says (jitter adds up to a quarter of it)")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	command := "make soak"
	if len(os.Args) > 1 {
		command += " SOAK_ARGS='" + strings.Join(os.Args[1:], " ") + "'"
	}
	err := generated.Write(page, "Soak under faults", "For anyone changing how Quire writes, retries or answers a fault: what a "+
		"run of mixed traffic through injected DynamoDB faults did, and whether every invariant held. How it runs is in "+
		"[Performance and cost](performance.md).", command, func(w io.Writer) error { return run(ctx, o, w) })
	if errors.Is(err, errFailed) {
		os.Exit(1) // the report says which checks failed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// page is the page of docs/ a soak that passes writes.
const page = "docs/soak.md"

// errFailed is a soak that ran and failed a check.
var errFailed = errors.New("a check failed")

func (o options) check() error {
	switch {
	case o.requests < 1:
		return fmt.Errorf("-requests %d: want at least 1", o.requests)
	case o.clients < 1 || o.clients > 1000:
		return fmt.Errorf("-clients %d: want 1 to 1000", o.clients)
	case o.customers < 1:
		return fmt.Errorf("-customers %d: want at least 1", o.customers)
	case o.tries < 1:
		return fmt.Errorf("-tries %d: want at least 1", o.tries)
	case o.maxWait < 0:
		return fmt.Errorf("-max-wait %v: want a duration of 0 or more", o.maxWait)
	}
	if _, err := ddbfault.ParseProfile(o.profile); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	return nil
}

// run sets the soak up, sends the operations, and writes the report and
// the checks to w; it returns errFailed when a check failed, and another
// error when the soak could not run.
func run(ctx context.Context, o options, w io.Writer) error {
	step := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "soak: "+format+"\n", args...)
	}
	step("starting DynamoDB Local, seeding %d customers", o.customers)
	e, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer e.close()
	before, err := scan(ctx, e.direct, e.tables)
	if err != nil {
		return fmt.Errorf("read the tables before the run: %w", err)
	}
	ops := plan(o, e)
	step("sending %d operations from %d clients through faults %q", len(ops), o.clients, o.profile)
	p := retryPolicy{tries: o.tries, maxWait: o.maxWait}
	took := send(ctx, e.api.URL, ops, o.clients, o.seed, p)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	injected, calls := e.proxy.Injected(), map[string]int{}
	for _, op := range dynamoOps {
		calls[op] = e.proxy.Calls(op)
	}
	step("checking the tables")
	after, err := scan(ctx, e.direct, e.tables)
	if err != nil {
		return fmt.Errorf("read the tables after the run: %w", err)
	}
	r := &report{opts: o, ops: ops, took: took, injected: injected, calls: calls, logs: e.logs, records: after.records}
	r.checks = checkAll(ops, before, after, e.seeded)
	r.print(w)
	if !r.passed() {
		return errFailed
	}
	return nil
}
