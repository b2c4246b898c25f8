package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/telemetry"
)

// telemetryRun is what a request's line and metrics add to a warm request.
type telemetryRun struct {
	without, with time.Duration // medians of a warm GET /users/{id}
	requests      int           // each way
	line          testing.BenchmarkResult
}

// The warm requests timed each way, in rounds that alternate, so that the
// machine's mood hits both alike.
const (
	telemetryRounds   = 20
	telemetryPerRound = 100
)

// telemetryCost times a warm GET /users/{id} in the users function, in
// process against DynamoDB Local, without telemetry and with it as
// deployed (a JSON line with its metrics, written to /dev/null through
// slog, and the DynamoDB client's figures), and the line alone.
func telemetryCost(cfg service.Config) (telemetryRun, error) {
	h, err := service.Users(argon2id.Hasher)(cfg)
	if err != nil {
		return telemetryRun{}, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return telemetryRun{}, err
	}
	defer devnull.Close()
	log := &telemetry.Logger{
		Log: slog.New(slog.NewJSONHandler(devnull, nil)), JSON: true, Function: routes.GroupUsers,
		Namespace: "Quire/bench", Metrics: devnull,
	}
	plain, logged := apigw.NewHandler(h, nil), apigw.NewHandler(h, log)
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(event("GET", "/users/1", "/users/{id}", map[string]string{"id": "1"}), &ev); err != nil {
		return telemetryRun{}, err
	}
	ctx := context.Background()
	var without, with []time.Duration
	type way struct {
		h   apigw.Handler
		out *[]time.Duration
	}
	ways := []way{{plain, &without}, {logged, &with}}
	for range telemetryRounds {
		for _, w := range ways {
			for range telemetryPerRound {
				start := time.Now()
				resp, err := w.h(ctx, ev)
				d := time.Since(start)
				if err != nil || resp.StatusCode != 200 {
					return telemetryRun{}, fmt.Errorf("GET /users/1: %d %v", resp.StatusCode, err)
				}
				*w.out = append(*w.out, d)
			}
		}
		ways[0], ways[1] = ways[1], ways[0]
	}
	rec := &telemetry.Record{}
	rec.SetVersion(1)
	rec.AddDynamoDB(telemetry.DynamoDB{Calls: 1, Units: 1})
	req := telemetry.Request{Route: "GET /users/{id}", Status: 200, Latency: time.Millisecond, RequestID: ev.RequestContext.RequestID,
		TraceID: "1-6740a1b2-0123456789abcdef01234567", Caller: "1", Role: "admin"}
	line := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			log.Write(ctx, req, rec)
		}
	})
	if line.N == 0 {
		return telemetryRun{}, errors.New("the line's benchmark did not run")
	}
	return telemetryRun{without: median(without), with: median(with), requests: len(with), line: line}, nil
}

// printTelemetry reports what telemetry adds against warm, the users
// function's warm GET /users/{id} through the Lambda Runtime API (as Lambda
// serves it), and against the same request in process, without the
// runtime's hop, where the share is largest.
func printTelemetry(w io.Writer, t telemetryRun, warm time.Duration) {
	added := t.with - t.without
	share := float64(added) / float64(warm) * 100
	fmt.Fprintf(w, "\n## What a request's line and metrics cost\n\nWhat each request's line and metrics add to a warm `GET /users/{id}`. "+
		"The users function runs in process against DynamoDB Local: medians of %d requests each way, alternating. "+
		"%.0f µs without them, %.0f µs with them: %+.0f µs, "+
		"%.1f%% of the function's warm request through the Lambda Runtime API (%s, above) %s, and %.1f%% in process. "+
		"The line alone (`Logger.Write`, testing.Benchmark): %.1f µs, %d allocations, %d B. Target: under 5%%.\n",
		t.requests, us(t.without), us(t.with), us(added), share, ms(warm), mark(share < 5),
		float64(added)/float64(t.without)*100, float64(t.line.NsPerOp())/1000, t.line.AllocsPerOp(), t.line.AllocedBytesPerOp())
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
