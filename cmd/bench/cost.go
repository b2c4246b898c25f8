package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/routes"
)

// Prices in us-east-1 on pricesDate, each at its first tier: API Gateway's
// per request (a REST API's first 333 million a month, an HTTP API's first
// 300 million), Lambda's on arm64 (requests, and duration up to 7.5 billion
// GB-seconds a month), DynamoDB's on demand since its cut of 2024-11-01.
const (
	pricesDate          = "2026-11-24"
	restAPIPerMillion   = 3.50
	httpAPIPerMillion   = 1.00
	lambdaPerMillion    = 0.20
	lambdaPerGBSecond   = 0.0000133334
	readUnitPerMillion  = 0.125
	writeUnitPerMillion = 0.625
)

// authorizerHitRatio is the share of protected requests whose token's
// decision API Gateway has cached (for authorizer.CacheTTL, 5 minutes with
// 15-minute tokens): a client sending a request every 10 s or so misses
// once per TTL, but the cache is not shared across the gateway's fleet.
const authorizerHitRatio = 0.80

// billedMillis is what Lambda bills for d: whole milliseconds, rounded up.
func billedMillis(d time.Duration) int {
	return max(1, int((d+time.Millisecond-1)/time.Millisecond))
}

// lambdaCost is the cost of a million invocations of a function of memoryMB
// that each bill millis.
func lambdaCost(memoryMB, millis int) float64 {
	return lambdaPerMillion + float64(memoryMB)/1024*float64(millis)/1000*lambdaPerGBSecond*1e6
}

// dynamoCost is the cost of a million requests that each take read and
// write request units.
func dynamoCost(read, write float64) float64 {
	return read*readUnitPerMillion + write*writeUnitPerMillion
}

// routeCost is what a million requests of one mix entry cost, in US
// dollars, by service.
type routeCost struct {
	weighted
	group                               string
	memoryMB, millis                    int
	read, write                         float64 // units per request
	gateway, authorizer, lambda, dynamo float64
}

func (c routeCost) total() float64 { return c.gateway + c.authorizer + c.lambda + c.dynamo }

// httpAPI is the cost on an HTTP API instead.
func (c routeCost) httpAPI() float64 { return c.total() - c.gateway + httpAPIPerMillion }

// authorizerRun is the authorizer's memory and billed time per invocation.
type authorizerRun struct{ memoryMB, millis int }

// routeCosts prices every mix entry.
func routeCosts(mix []weighted, authz authorizerRun) ([]routeCost, error) {
	groups := map[string]routes.Group{}
	for _, g := range routes.Groups() {
		groups[g.Name] = g
	}
	var out []routeCost
	for _, w := range mix {
		r, ok := routeOf(w.route)
		if !ok {
			return nil, fmt.Errorf("cost: no route %s", w.route)
		}
		c := routeCost{weighted: w, group: r.Group, memoryMB: groups[r.Group].MemoryMB, millis: billedMillis(w.row.took)}
		for _, call := range w.row.steady {
			for _, t := range call.touches {
				c.read, c.write = c.read+t.read, c.write+t.write
			}
		}
		c.gateway = restAPIPerMillion
		if r.Access != routes.Public {
			c.authorizer = (1 - authorizerHitRatio) * lambdaCost(authz.memoryMB, authz.millis)
		}
		c.lambda = lambdaCost(c.memoryMB, c.millis)
		c.dynamo = dynamoCost(c.read, c.write)
		out = append(out, c)
	}
	return out, nil
}

func routeOf(key string) (routes.Route, bool) {
	for _, r := range routes.All() {
		if r.Resource().Key() == key {
			return r, true
		}
	}
	return routes.Route{}, false
}

// blend is the mix's cost per million requests: each entry's by its share.
func blend(cs []routeCost) routeCost {
	var b routeCost
	for _, c := range cs {
		b.gateway += c.share * c.gateway
		b.authorizer += c.share * c.authorizer
		b.lambda += c.share * c.lambda
		b.dynamo += c.share * c.dynamo
		b.read += c.share * c.read
		b.write += c.share * c.write
	}
	return b
}

func printCost(w io.Writer, cs []routeCost, authz authorizerRun) {
	fmt.Fprintf(w, "\n## Cost per million requests\n\nCost per million requests, in US dollars, us-east-1, at the prices of %s. "+
		"These are the first tiers; free tiers and data transfer are left out.\n\n"+
		"- API Gateway REST API: $%.2f per million requests (HTTP API: $%.2f).\n"+
		"- Lambda on arm64: $%.2f per million requests and $%.10f per GB-second, at each function's memory "+
		"(routes.Groups, which the stack deploys). The time is the warm time measured here through the local gateway "+
		"against DynamoDB Local: the median of %d runs, a GET's second run, on warm caches. It is billed by the "+
		"millisecond, rounded up.\n"+
		"- The authorizer (%d MB, routes.AuthorizerMemoryMB, %d ms billed) runs for the %.0f%% of protected requests "+
		"whose token's decision is not cached (a %.0f-minute TTL).\n"+
		"- DynamoDB on demand: $%.3f per million read and $%.3f per million write request units, since the price cut "+
		"of 2024-11-01. The units are by DynamoDB's rules, indexes included.\n\n", pricesDate, restAPIPerMillion, httpAPIPerMillion, lambdaPerMillion, lambdaPerGBSecond,
		timingPasses, authz.memoryMB, authz.millis, 100*(1-authorizerHitRatio), authorizer.CacheTTL(login.DefaultLifetime).Minutes(),
		readUnitPerMillion, writeUnitPerMillion)
	fmt.Fprintln(w, "| route | request | function | warm time | read units | write units | API Gateway | authorizer | Lambda | DynamoDB | total | on an HTTP API |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range cs {
		fmt.Fprintf(w, "| `%s` | %s | %s (%d MB) | %s (%d ms) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.route, c.name, c.group, c.memoryMB, ms(c.row.took), c.millis, decimal(c.read), decimal(c.write),
			dollars(c.gateway), dollars(c.authorizer), dollars(c.lambda), dollars(c.dynamo), dollars(c.total()), dollars(c.httpAPI()))
	}
	b := blend(cs)
	fmt.Fprintf(w, "| **the mix** | blended by share | | | %s | %s | %s | %s | %s | %s | **%s** | **%s** |\n",
		decimal(b.read), decimal(b.write), dollars(b.gateway), dollars(b.authorizer), dollars(b.lambda),
		dollars(b.dynamo), dollars(b.total()), dollars(b.httpAPI()))
	fmt.Fprintf(w, "\nThe mix costs %s per million requests on the REST API and would cost %s on an HTTP API: API Gateway "+
		"is %.0f%% of the total. At %s requests/s (about %s billion a month), its lower tiers apply past the first "+
		"333 million.\n", dollars(b.total()), dollars(b.httpAPI()), 100*b.gateway/b.total(),
		thousands(reportRate), decimal(math.Round(reportRate*30*24*3600/1e9)))
	fmt.Fprintf(w, "\nDurations here are this machine's against DynamoDB Local; deployed, a Region's DynamoDB round trips "+
		"take a few milliseconds more and a 256 MB function gets about a seventh of a vCPU. Lambda's share stays small: 10 ms "+
		"more per request at 256 MB add %s per million.\n", dollars(lambdaCost(256, 10)-lambdaCost(256, 0)))
}

func dollars(x float64) string {
	if x == 0 {
		return "0"
	}
	return fmt.Sprintf("$%.3f", x)
}

// What an event costs beyond its change's request, at the prices of
// pricesDate: EventBridge's custom events and Pipes' requests (each per
// 64 KB chunk; an event is far smaller), DynamoDB Streams' reads (a
// GetRecords each, the pipe's), the outbox item's write in the change's
// transaction (an item under 1 KB: 2 write units, as every transactional
// write), and the events function's invocation (128 MB, 1 ms billed).
const (
	eventBridgePerMillion   = 1.00
	pipesPerMillion         = 0.40
	streamReadsPerMillion   = 0.20
	outboxWriteUnits        = 2
	enrichmentMemoryMB      = 128
	enrichmentBilledMillis  = 1
	enrichmentBatchOfEvents = 10
)

// eventCost is what a million events cost, from a busy pipe, whose
// batches are full (enrichmentBatchOfEvents events a GetRecords and an
// invocation), to a quiet one, which reads and invokes once an event.
func eventCost() (busy, quiet float64) {
	fixed := eventBridgePerMillion + pipesPerMillion + dynamoCost(0, outboxWriteUnits)
	perBatch := streamReadsPerMillion + lambdaCost(enrichmentMemoryMB, enrichmentBilledMillis)
	return fixed + perBatch/enrichmentBatchOfEvents, fixed + perBatch
}

// printEventsCost reports what events cost, by the million and in the mix.
func printEventsCost(w io.Writer, cs []routeCost) {
	share := 0.0
	for _, c := range cs {
		if r, _ := routeOf(c.route); len(r.Events) > 0 {
			share += c.share
		}
	}
	busy, quiet := eventCost()
	fmt.Fprintf(w, "\n## What events cost\n\nEach change a downstream system acts on is an event (docs/events.md). It "+
		"rides in its change's transaction. So a write route makes the same DynamoDB requests, in the same round trips, "+
		"with or without it. Its outbox item is %d more write units, which the table above counts already. Beyond "+
		"that, at the prices of %s:\n\n"+
		"- EventBridge: $%.2f per million events put on the bus.\n"+
		"- EventBridge Pipes: $%.2f per million events past its filter.\n"+
		"- DynamoDB Streams: $%.2f per million GetRecords, one per batch the pipe reads.\n"+
		"- The events function (%d MB, %d ms billed): one invocation per batch.\n"+
		"- The outbox item: %d write units, $%.3f per million.\n\n"+
		"A million events cost %s with full batches of %d. They cost %s when each event is a batch of its own. "+
		"%.1f%% of the mix's requests publish an event. That is %s to %s per million requests, beside the %s the "+
		"mix costs.\n",
		outboxWriteUnits, pricesDate, eventBridgePerMillion, pipesPerMillion, streamReadsPerMillion,
		enrichmentMemoryMB, enrichmentBilledMillis, outboxWriteUnits, dynamoCost(0, outboxWriteUnits),
		dollars(busy), enrichmentBatchOfEvents, dollars(quiet), 100*share,
		dollars(share*(busy-dynamoCost(0, outboxWriteUnits))), dollars(share*(quiet-dynamoCost(0, outboxWriteUnits))),
		dollars(blend(cs).total()))
}
