package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗ over target"
}

// initRatio is the median of init[i] / floor[i]: the functions start by
// turns, a round each at a time (see run), so that a round's ratio compares
// starts that met the machine in the same mood.
func initRatio(init, floor []time.Duration) float64 {
	ratios := make([]float64, len(init))
	for i := range init {
		ratios[i] = float64(init[i]) / float64(floor[i])
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}

func printReport(w io.Writer, fns []*function, rows []requestRow, costs []verifyCost, logins []loginTime, docs []configRow) {
	fmt.Fprintf(w, "## Functions: size, init and requests\n\nInit: medians of %d starts of each function (a copy written in one pass), in rounds of their own "+
		"before DynamoDB Local starts, in a deployed function's environment; "+
		"init / floor is the median of each round's ratio to the floor's init in the same round. Requests: medians of %d "+
		"cold starts each, against DynamoDB Local.\n\n", initRuns, runs)
	fmt.Fprintln(w, "| function | bootstrap (linux/arm64) | init | init / floor | cold request | warm request |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, f := range fns {
		init, ratio := median(f.init), initRatio(f.init, fns[0].init)
		sizeMark, ratioMark := "", ""
		if f.name != floorFunction {
			sizeMark, ratioMark = " "+mark(f.size < maxBootstrap), " "+mark(ratio <= maxInitRatio)
		}
		cold, warm := "not here", "not here" // the hook: see printHook
		if len(f.cold) > 0 {
			cold, warm = ms(median(f.cold)), ms(median(f.warm))
		}
		fmt.Fprintf(w, "| %s | %d B%s | %s | %.2fx%s | %s | %s |\n", f.name, f.size, sizeMark, ms(init), ratio, ratioMark, cold, warm)
	}
	fmt.Fprintf(w, "\nTargets: bootstrap under 10 MiB (%d B), init within %.1fx the floor.\n\n", maxBootstrap, maxInitRatio)
	fmt.Fprintln(w, "## DynamoDB requests per route\n\nThrough the local gateway, each route's DynamoDB requests, and their target. "+
		"Capacity units, as DynamoDB Local reports them and as DynamoDB's rules give them: read + write, indexes included. "+
		"Sequential round trips, where requests that overlap count once. The target is 1 for a GET of one resource, 2 for "+
		"a write, and 3 for `POST /pay` and a change proved by the current password. "+
		"A GET runs twice, the second time on the caches the first filled (\"again\", when it differs):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| route | request | DynamoDB requests | target | capacity units (Local) | units by the rules | round trips | target |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---|")
	for _, r := range rows {
		target := ""
		if r.target != 0 {
			target = fmt.Sprintf("%d %s", r.target, mark(len(r.ops) <= r.target))
		}
		requests := fmt.Sprint(len(r.ops))
		if len(r.ops) > 0 {
			requests += " (" + strings.Join(r.ops, ", ") + ")"
		}
		var read, write float64
		for _, c := range r.calls {
			for _, t := range c.touches {
				read, write = read+t.read, write+t.write
			}
		}
		trips, tripsTarget := fmt.Sprint(r.trips), ""
		if r.method == "GET" && (len(r.steady) != len(r.ops) || r.steadyTrips != r.trips) {
			requests += fmt.Sprintf("; again: %d", len(r.steady))
			trips += fmt.Sprintf("; again: %d", r.steadyTrips)
		}
		if t := roundTripTarget(r.requestCase); t != 0 {
			got := r.trips
			if r.method == "GET" { // judged on a warm instance, as the mix and the cost are
				got = r.steadyTrips
			}
			tripsTarget = fmt.Sprintf("%d %s", t, mark(got <= t))
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %.1f | %s + %s | %s | %s |\n", r.route, r.name, requests, target, r.capacity,
			decimal(read), decimal(write), trips, tripsTarget)
	}
	printAuth(w, costs, logins)
	printConfig(w, docs)
}

func printAuth(w io.Writer, costs []verifyCost, logins []loginTime) {
	fmt.Fprintln(w, "\n## The authorizer and login\n\nThe authorizer's warm cost per token (ES256, testing.Benchmark):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| operation | time | allocations | bytes |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, c := range costs {
		fmt.Fprintf(w, "| `%s` | %.1f µs | %d | %d B |\n", c.name, float64(c.nsPerOp)/1000, c.allocsPerOp, c.bytesPerOp)
	}
	fmt.Fprintf(w, "\nPOST /login, then POST /tokens and DELETE /session of its session, through the local gateway, medians of %d (login: argon2id, 19 MiB, 2 passes):\n\n", runs)
	fmt.Fprintln(w, "| outcome | status | time |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, l := range logins {
		fmt.Fprintf(w, "| %s | %d | %s |\n", l.name, l.status, ms(l.median))
	}
}

func printConfig(w io.Writer, rows []configRow) {
	fmt.Fprintf(w, "\n## The configuration document\n\nThe configuration document through the local gateway, medians of %d: each stored with PUT /admin/config "+
		"over the demo's, then read as is, with gzip and with If-None-Match: the plain GET's ETag; "+
		"body: the bytes the client receives; a PUT's capacity units are its head read (as the 304's) and its transaction's writes:\n\n", runs)
	fmt.Fprintln(w, "| document | request | status | body | time | DynamoDB requests | capacity units | target |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---:|---|")
	for _, r := range rows {
		body := fmt.Sprintf("%d B", r.body)
		if r.body > 0 && r.body != r.identity {
			body += fmt.Sprintf(" (%.1f%%)", 100*float64(r.body)/float64(r.identity))
		}
		capacity := fmt.Sprintf("%.1f", r.capacity)
		if r.write != 0 {
			capacity += fmt.Sprintf(" (%.1f write)", r.write)
		}
		requests := fmt.Sprint(len(r.ops))
		if len(r.ops) > 0 {
			requests += " (" + strings.Join(r.ops, ", ") + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.doc, r.request, r.status, body, ms(r.median), requests, capacity, r.target)
	}
}
