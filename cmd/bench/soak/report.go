package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/ddbfault"
)

// report is what a run found, printed as Markdown.
type report struct {
	opts     options
	ops      []*op
	took     time.Duration
	injected map[ddbfault.Kind]int
	calls    map[string]int // DynamoDB calls through the proxy, by operation
	logs     *logs
	records  map[string]record // by idempotency key, after the run
	checks   []check
}

// check is one verdict of the run, with what it found wrong.
type check struct {
	name   string
	ok     bool
	detail string
	issues []string
}

// passed reports whether every check passed.
func (r *report) passed() bool {
	return !slices.ContainsFunc(r.checks, func(c check) bool { return !c.ok })
}

// The DynamoDB operations whose calls the report counts.
var dynamoOps = []string{"GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem",
	"BatchWriteItem", "TransactWriteItems", "TransactGetItems"}

func (r *report) print(out io.Writer) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	rules, _ := ddbfault.ParseProfile(r.opts.profile)
	var ruleText []string
	for _, rl := range rules {
		ruleText = append(ruleText, rl.String())
	}
	tries, retries := 0, 0
	for _, o := range r.ops {
		tries += len(o.tries)
		retries += max(len(o.tries)-1, 0)
	}
	fmt.Fprintf(w, "Profile `%s` (%s), seed %d. %d operations from %d clients in %.1f s (%.0f operations/s): "+
		"%d requests, %d first tries and %d retries (at most %d tries each, waiting Retry-After capped at %v, plus jitter).\n\n",
		r.opts.profile, strings.Join(ruleText, ", "), r.opts.seed, len(r.ops), r.opts.clients, r.took.Seconds(),
		float64(len(r.ops))/r.took.Seconds(), tries, tries-retries, retries, r.opts.tries, r.opts.maxWait)
	r.printStatuses(w)
	r.printServerErrors(w)
	r.printLatencies(w)
	r.printFaults(w)
	r.printUnresolved(w)
	fmt.Fprintf(w, "\n| check | result | detail |\n|---|---|---|\n")
	for _, c := range r.checks {
		verdict := "PASS"
		if !c.ok {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.name, verdict, c.detail)
	}
	for _, c := range r.checks {
		for i, issue := range c.issues {
			if i == 20 {
				fmt.Fprintf(w, "- ... and %d more\n", len(c.issues)-i)
				break
			}
			if i == 0 {
				fmt.Fprintf(w, "\n%s:\n\n", c.name)
			}
			fmt.Fprintf(w, "- %s\n", issue)
		}
	}
	if r.passed() {
		fmt.Fprintf(w, "\nPASS\n")
	} else {
		fmt.Fprintf(w, "\nFAIL\n")
	}
}

// printStatuses prints the requests by status, first tries and retries.
func (r *report) printStatuses(w io.Writer) {
	type count struct{ first, retry int }
	by := map[string]*count{}
	for _, o := range r.ops {
		for i, t := range o.tries {
			s := statusText(t)
			if by[s] == nil {
				by[s] = &count{}
			}
			if i == 0 {
				by[s].first++
			} else {
				by[s].retry++
			}
		}
	}
	fmt.Fprintf(w, "| status | first tries | retries | all |\n|---|---:|---:|---:|\n")
	for _, s := range slices.Sorted(maps.Keys(by)) {
		c := by[s]
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", s, c.first, c.retry, c.first+c.retry)
	}
	var retried []string
	for _, k := range kinds {
		causes := map[string]int{}
		for _, o := range r.ops {
			for _, t := range o.tries[:max(len(o.tries)-1, 0)] {
				if o.kind == k.name {
					causes[statusText(t)]++
				}
			}
		}
		for _, c := range slices.Sorted(maps.Keys(causes)) {
			retried = append(retried, fmt.Sprintf("`%s` after %s: %d", k.name, c, causes[c]))
		}
	}
	if len(retried) > 0 {
		fmt.Fprintf(w, "\nRetries: %s.\n", strings.Join(retried, "; "))
	}
}

// statusText names a try's answer: its status, with the problem type of a
// 409 (a conflict to retry, or a refusal) and whether a 503 said when to
// retry.
func statusText(t try) string {
	switch {
	case t.err != nil:
		return "no answer"
	case t.status == http.StatusConflict:
		return fmt.Sprintf("409 %s", strings.TrimPrefix(t.problem, rest.ProblemTypeBase))
	case t.status == http.StatusServiceUnavailable && t.retryAfter != "":
		return "503 with Retry-After"
	case t.status == http.StatusServiceUnavailable:
		return "503 without Retry-After"
	}
	return fmt.Sprintf("%d %s", t.status, http.StatusText(t.status))
}

// otherServerErrors returns the 5xx answers but 503s with Retry-After.
func otherServerErrors(ops []*op) (out []struct {
	o *op
	t try
}) {
	for _, o := range ops {
		for _, t := range o.tries {
			if t.status >= 500 && (t.status != http.StatusServiceUnavailable || t.retryAfter == "") {
				out = append(out, struct {
					o *op
					t try
				}{o, t})
			}
		}
	}
	return out
}

// printServerErrors prints the 5xx split, and each 5xx that is not a 503
// with Retry-After with what the functions logged for it.
func (r *report) printServerErrors(w io.Writer) {
	unavailable := 0
	for _, o := range r.ops {
		for _, t := range o.tries {
			if t.status == http.StatusServiceUnavailable && t.retryAfter != "" {
				unavailable++
			}
		}
	}
	others := otherServerErrors(r.ops)
	verdict := "PASS"
	if len(others) > 0 {
		verdict = "**FAIL**"
	}
	fmt.Fprintf(w, "\n| 5xx answers | requests |\n|---|---:|\n| 503 with Retry-After | %d |\n| any other 5xx | %d: %s |\n",
		unavailable, len(others), verdict)
	for i, e := range others {
		if i == 10 {
			fmt.Fprintf(w, "\n... and %d more\n", len(others)-i)
			break
		}
		fmt.Fprintf(w, "\n- %s %s (key %q, body %q): %d %.300s\n", e.o.method, e.o.path, e.o.key, e.o.body, e.t.status, e.t.body)
		for _, l := range r.logs.lines(e.t.requestID) {
			fmt.Fprintf(w, "  - log: %.600s\n", l)
		}
	}
}

// printLatencies prints p50, p99 and max of each request and of each
// operation with its retries and waits, by kind and in all.
func (r *report) printLatencies(w io.Writer) {
	fmt.Fprintf(w, "\n| operation | operations | requests | request p50 | p99 | max | operation p50 | p99 | max |\n"+
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(name string, ops []*op) {
		var reqs, whole []time.Duration
		for _, o := range ops {
			whole = append(whole, o.took)
			for _, t := range o.tries {
				reqs = append(reqs, t.took)
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", name, len(ops), len(reqs),
			ms(pct(reqs, 50)), ms(pct(reqs, 99)), ms(pct(reqs, 100)), ms(pct(whole, 50)), ms(pct(whole, 99)), ms(pct(whole, 100)))
	}
	for _, k := range kinds {
		var ops []*op
		for _, o := range r.ops {
			if o.kind == k.name && len(o.tries) > 0 {
				ops = append(ops, o)
			}
		}
		row("`"+k.name+"`", ops)
	}
	row("all", r.ops)
}

// printFaults prints the faults the proxy injected, against the DynamoDB
// calls that went through it.
func (r *report) printFaults(w io.Writer) {
	calls := 0
	for _, n := range r.calls {
		calls += n
	}
	fmt.Fprintf(w, "\n| fault injected | DynamoDB calls |\n|---|---:|\n")
	faulted := 0
	for _, k := range ddbfault.Kinds {
		fmt.Fprintf(w, "| %s | %d |\n", k, r.injected[k])
		faulted += r.injected[k]
	}
	fmt.Fprintf(w, "| all faults, of %d calls | %d (%.1f%%) |\n", calls, faulted, 100*float64(faulted)/float64(max(calls, 1)))
	var parts []string
	for _, op := range dynamoOps {
		if r.calls[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, r.calls[op]))
		}
	}
	fmt.Fprintf(w, "\nDynamoDB calls through the proxy: %s. Errors the functions and the gateway logged: %d.\n",
		strings.Join(parts, ", "), r.logs.count())
}

// printUnresolved lists the operations whose client gave up.
func (r *report) printUnresolved(w io.Writer) {
	var left []*op
	for _, o := range r.ops {
		if !o.final {
			left = append(left, o)
		}
	}
	fmt.Fprintf(w, "\nOperations without a final answer after %d tries: %d.\n", r.opts.tries, len(left))
	for _, o := range left {
		outcome := "a read"
		if o.key != "" {
			outcome = "its key has no record: it took no effect"
			if _, ok := r.records[o.key]; ok {
				outcome = "its key has a record: it took effect"
			}
		}
		fmt.Fprintf(w, "- %s %s (key %q), %d tries, last %s: %s\n", o.method, o.path, o.key, len(o.tries), statusText(o.last()), outcome)
	}
}

// pct returns the p-th percentile of ds (nearest rank), 0 for none.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// problemType returns the type of a problem+json body, "" when it has
// none.
func problemType(body []byte) string {
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return ""
	}
	return p.Type
}
