package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/telemetry"
)

var now = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

// logger returns a Logger writing JSON at level into log, and its lone
// metrics lines into metrics.
func logger(level slog.Level, json bool) (l *telemetry.Logger, log, metrics *bytes.Buffer) {
	log, metrics = &bytes.Buffer{}, &bytes.Buffer{}
	var h slog.Handler = slog.NewJSONHandler(log, &slog.HandlerOptions{Level: level})
	if !json {
		h = slog.NewTextHandler(log, &slog.HandlerOptions{Level: level})
	}
	return &telemetry.Logger{
		Log: slog.New(h), JSON: json, Function: "users", Namespace: "Quire/test", Metrics: metrics,
		Now: func() time.Time { return now },
	}, log, metrics
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// TestLine: one JSON line per request says who called which route and how
// it went, and carries the request's metrics in the embedded metric format.
func TestLine(t *testing.T) {
	l, log, metrics := logger(slog.LevelInfo, true)
	rec := &telemetry.Record{}
	ctx := telemetry.NewContext(context.Background(), rec)
	rec.SetVersion(2)
	rec.AddDynamoDB(telemetry.DynamoDB{Calls: 1, Units: 0.5})
	rec.AddDynamoDB(telemetry.DynamoDB{Calls: 1, Retries: 2, Throttles: 1, Conflicts: 1, Units: 2})
	telemetry.Count(ctx, telemetry.IdempotentReplays)
	rec.Fail("https://quire.dev/problems/conflict", errors.New("dynamodb TransactWriteItems on users: cancelled"))
	l.Write(ctx, telemetry.Request{
		Route: "PUT /users/{id}", Status: 409, Latency: 12345 * time.Microsecond, ColdStart: true,
		RequestID: "req-1", TraceID: "1-6740a1b2-0123456789abcdef01234567", Caller: "2", Role: "customer",
	}, rec)
	if metrics.Len() != 0 {
		t.Errorf("a metrics line of its own: %s", metrics)
	}
	if n := strings.Count(log.String(), "\n"); n != 1 {
		t.Fatalf("%d lines, want 1: %s", n, log)
	}
	if err := telemetry.ValidateEMF(log.Bytes(), now); err != nil {
		t.Fatalf("not EMF: %v: %s", err, log)
	}
	got := decode(t, log.Bytes())
	for k, want := range map[string]any{
		"level": "INFO", "msg": "request", "request_id": "req-1", "trace_id": "1-6740a1b2-0123456789abcdef01234567",
		"function": "users", "route": "PUT /users/{id}", "status": 409.0, "latency_ms": 12.345, "cold_start": true,
		"caller": "2", "role": "customer", "version": 2.0, "dynamodb_calls": 2.0, "dynamodb_units": 2.5,
		"problem": "https://quire.dev/problems/conflict", "error": "dynamodb TransactWriteItems on users: cancelled",
		"Requests": 1.0, "Latency": 12.345, "ClientErrors": 1.0, "ServerErrors": 0.0, "ColdStarts": 1.0,
		"DynamoDBThrottles": 1.0, "DynamoDBConflicts": 1.0, "DynamoDBRetries": 2.0, "IdempotentReplays": 1.0,
		"FailedLogins": nil, // a function metric of 0 is left out
	} {
		if got[k] != want {
			t.Errorf("%s = %v (%T), want %v", k, got[k], got[k], want)
		}
	}
	aws := got["_aws"].(map[string]any)
	if aws["Timestamp"] != float64(now.UnixMilli()) {
		t.Errorf("Timestamp %v", aws["Timestamp"])
	}
	directives, _ := json.Marshal(aws["CloudWatchMetrics"]) // re-encoded: members in sorted order
	want := `[{"Dimensions":[["route"]],"Metrics":[{"Name":"Requests","Unit":"Count"},` +
		`{"Name":"Latency","Unit":"Milliseconds"},{"Name":"ClientErrors","Unit":"Count"},{"Name":"ServerErrors","Unit":"Count"}],"Namespace":"Quire/test"},` +
		`{"Dimensions":[["function"]],"Metrics":[{"Name":"ColdStarts","Unit":"Count"},` +
		`{"Name":"DynamoDBThrottles","Unit":"Count"},{"Name":"DynamoDBConflicts","Unit":"Count"},{"Name":"DynamoDBRetries","Unit":"Count"},` +
		`{"Name":"IdempotentReplays","Unit":"Count"}],"Namespace":"Quire/test"}]`
	if string(directives) != want {
		t.Errorf("CloudWatchMetrics\n%s\nwant\n%s", directives, want)
	}
}

// TestWarmSuccess: a warm request that met nothing unusual declares the
// route's metrics only.
func TestWarmSuccess(t *testing.T) {
	l, log, _ := logger(slog.LevelInfo, true)
	l.Write(context.Background(), telemetry.Request{Route: "GET /users/{id}", Status: 200, Latency: time.Millisecond}, &telemetry.Record{})
	if err := telemetry.ValidateEMF(log.Bytes(), now); err != nil {
		t.Fatal(err)
	}
	got := decode(t, log.Bytes())
	directives := got["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)
	if len(directives) != 1 || got["Requests"] != 1.0 || got["ServerErrors"] != 0.0 {
		t.Errorf("line %s", log)
	}
	for _, m := range []string{telemetry.ColdStarts, telemetry.DynamoDBThrottles, telemetry.DynamoDBConflicts, telemetry.DynamoDBRetries, telemetry.IdempotentReplays, telemetry.FailedLogins} {
		if _, ok := got[m]; ok {
			t.Errorf("%s present", m)
		}
	}
}

// TestLevels: a server error is WARN when a dependency failed (its
// problem says so) and ERROR when Quire did; an anonymous success has no
// caller, version or DynamoDB figures.
func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		status  int
		problem string
		want    string
	}{
		{200, "", "INFO"},
		{404, "https://quire.dev/problems/not-found", "INFO"},
		{503, "https://quire.dev/problems/unavailable", "WARN"},
		{500, "https://quire.dev/problems/internal", "ERROR"},
		{502, "", "ERROR"},
	} {
		l, log, _ := logger(slog.LevelInfo, true)
		rec := &telemetry.Record{}
		if tc.problem != "" {
			rec.Fail(tc.problem, nil)
		}
		l.Write(context.Background(), telemetry.Request{Route: "GET /health", Status: tc.status}, rec)
		got := decode(t, log.Bytes())
		if got["level"] != tc.want {
			t.Errorf("%d %s: level %v, want %s", tc.status, tc.problem, got["level"], tc.want)
		}
		for _, absent := range []string{"caller", "role", "version", "dynamodb_calls", "error"} {
			if _, ok := got[absent]; ok {
				t.Errorf("%d: %s present: %v", tc.status, absent, got[absent])
			}
		}
	}
}

// TestMetricsWithoutTheLine: when the level leaves the request's line out,
// or the log is text, the metrics still go out, as a JSON line of their own.
func TestMetricsWithoutTheLine(t *testing.T) {
	for name, tc := range map[string]struct {
		level   slog.Level
		json    bool
		logLine bool
	}{
		"level WARN": {slog.LevelWarn, true, false},
		"text":       {slog.LevelInfo, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			l, log, metrics := logger(tc.level, tc.json)
			l.Write(context.Background(), telemetry.Request{Route: "POST /login", Status: 401}, &telemetry.Record{})
			if (log.Len() > 0) != tc.logLine || strings.Contains(log.String(), "_aws") {
				t.Errorf("log: %q", log)
			}
			if err := telemetry.ValidateEMF(metrics.Bytes(), now); err != nil {
				t.Fatalf("metrics line: %v: %s", err, metrics)
			}
			got := decode(t, metrics.Bytes())
			if got["route"] != "POST /login" || got["function"] != "users" || got["ClientErrors"] != 1.0 {
				t.Errorf("metrics line %s", metrics)
			}
		})
	}
}

// TestNoNamespace: without a namespace, the line has no metrics.
func TestNoNamespace(t *testing.T) {
	l, log, metrics := logger(slog.LevelInfo, true)
	l.Namespace = ""
	l.Write(context.Background(), telemetry.Request{Route: "GET /health", Status: 200}, nil)
	if strings.Contains(log.String(), "_aws") || strings.Contains(log.String(), "Requests") || metrics.Len() > 0 {
		t.Errorf("log %s, metrics %s", log, metrics)
	}
}

// TestNilRecord: a context without a Record takes every note and drops it.
func TestNilRecord(t *testing.T) {
	ctx := context.Background()
	r := telemetry.FromContext(ctx)
	r.SetVersion(1)
	r.Fail("x", errors.New("y"))
	r.Count(telemetry.FailedLogins)
	r.AddDynamoDB(telemetry.DynamoDB{Calls: 1})
	telemetry.Count(ctx, telemetry.FailedLogins)
}

// TestValidateEMF: the checker refuses what the specification refuses.
func TestValidateEMF(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"_aws": map[string]any{"Timestamp": now.UnixMilli(), "CloudWatchMetrics": []any{map[string]any{
				"Namespace": "Quire", "Dimensions": []any{[]any{"route"}},
				"Metrics": []any{map[string]any{"Name": "Requests", "Unit": "Count"}},
			}}},
			"route": "GET /health", "Requests": 1,
		}
	}
	check := func(m map[string]any) error {
		b, _ := json.Marshal(m)
		return telemetry.ValidateEMF(b, now)
	}
	if err := check(good()); err != nil {
		t.Fatalf("a valid document: %v", err)
	}
	directive := func(m map[string]any) map[string]any {
		return m["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
	}
	for name, spoil := range map[string]func(m map[string]any){
		"no _aws":      func(m map[string]any) { delete(m, "_aws") },
		"no Timestamp": func(m map[string]any) { delete(m["_aws"].(map[string]any), "Timestamp") },
		"an old Timestamp": func(m map[string]any) {
			m["_aws"].(map[string]any)["Timestamp"] = now.Add(-15 * 24 * time.Hour).UnixMilli()
		},
		"no directives":     func(m map[string]any) { delete(m["_aws"].(map[string]any), "CloudWatchMetrics") },
		"no Namespace":      func(m map[string]any) { delete(directive(m), "Namespace") },
		"no Dimensions":     func(m map[string]any) { delete(directive(m), "Dimensions") },
		"a missing value":   func(m map[string]any) { delete(m, "Requests") },
		"a string value":    func(m map[string]any) { m["Requests"] = "1" },
		"a missing key":     func(m map[string]any) { delete(m, "route") },
		"a numeric key":     func(m map[string]any) { m["route"] = 1 },
		"an unknown unit":   func(m map[string]any) { directive(m)["Metrics"].([]any)[0].(map[string]any)["Unit"] = "Requests" },
		"31 dimension keys": func(m map[string]any) { directive(m)["Dimensions"] = []any{make([]any, 31)} },
		"a metric twice": func(m map[string]any) {
			directive(m)["Metrics"] = append(directive(m)["Metrics"].([]any), directive(m)["Metrics"].([]any)[0])
		},
		"101 values":         func(m map[string]any) { m["Requests"] = make([]float64, 101) },
		"a long dimension":   func(m map[string]any) { m["route"] = strings.Repeat("x", 1025) },
		"resolution of 30 s": func(m map[string]any) { directive(m)["Metrics"].([]any)[0].(map[string]any)["StorageResolution"] = 30 },
	} {
		m := good()
		spoil(m)
		if err := check(m); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}
