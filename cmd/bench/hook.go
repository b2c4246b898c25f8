package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/pretraffic"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

// hookName is the pre-traffic hook's function.
const hookName = "hook"

// hookRun is one deployment group's pre-traffic checks, run in this process
// against DynamoDB Local: how many invocations of the new version they
// make and how long they take.
type hookRun struct {
	group       string
	memoryMB    int
	invocations int
	took        time.Duration
}

// hookRuns runs every group's checks on functions built from cfg, as the
// first requests of a new version: fresh caches, warm process.
func hookRuns(ctx context.Context, cfg service.Config) ([]hookRun, error) {
	fns, err := api.Handlers(cfg)
	if err != nil {
		return nil, err
	}
	a, err := api.Authorizer(cfg)
	if err != nil {
		return nil, err
	}
	memory := map[string]int{pretraffic.Authorizer: routes.AuthorizerMemoryMB}
	for _, g := range routes.Groups() {
		memory[g.Name] = g.MemoryMB
	}
	var out []hookRun
	for _, g := range pretraffic.Groups() {
		invoke := pretraffic.Handler(a.Handle)
		if g != pretraffic.Authorizer {
			invoke = pretraffic.Handler(fns[g])
		}
		r := hookRun{group: g, memoryMB: memory[g]}
		counted := func(ctx context.Context, payload []byte) ([]byte, error) {
			r.invocations++
			return invoke(ctx, payload)
		}
		start := time.Now()
		if err := pretraffic.Check(ctx, g, counted); err != nil {
			return nil, fmt.Errorf("pre-traffic checks of %s: %w", g, err)
		}
		r.took = time.Since(start)
		out = append(out, r)
	}
	return out, nil
}

// printHook reports what the pre-traffic hook costs a deployment: per
// group, one run of the hook (its init, and the checks' time with the
// new version's cold start, which the hook waits for, billed at its
// memory) and the checks' invocations of the new version (a cold start,
// then the checks' time, billed at the version's memory). inits are the
// medians of the functions' inits, by name.
func printHook(w io.Writer, runs []hookRun, inits map[string]time.Duration) {
	fmt.Fprintf(w, "\n## The pre-traffic hook\n\nBefore CodeDeploy shifts traffic to a new version, the hook (`functions/hook`, %d MB) "+
		"invokes it with its group's read-only checks (`internal/pretraffic`). The checks here run in this process against "+
		"DynamoDB Local on the demo data; a deployed run adds the network between the hook and Lambda. The cost is at "+
		"Lambda's prices of %s, the inits billed as duration (the hook's too, and the new version's, which the hook waits for).\n\n", pretraffic.MemoryMB, pricesDate)
	fmt.Fprintln(w, "| deployment group | invocations of the new version | checks' time | cost of a deployment (US$) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	var total float64
	for _, r := range runs {
		hook := lambdaCost(pretraffic.MemoryMB, billedMillis(inits[hookName]+inits[r.group]+r.took)) / 1e6
		version := (lambdaCost(r.memoryMB, billedMillis(inits[r.group]+r.took)) + float64(r.invocations-1)*lambdaPerMillion) / 1e6
		total += hook + version
		fmt.Fprintf(w, "| %s | %d | %s | %.8f |\n", r.group, r.invocations, ms(r.took), hook+version)
	}
	fmt.Fprintf(w, "\nA deployment that changes every function runs the hook %d times, for US$ %.8f: "+
		"%.0f such deployments cost a cent.\n\n", len(runs), total, 0.01/total)
}
