package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"
)

// Request is what a request's line says beyond its Record: who called
// which route and how it was answered. It never holds a body, a token, an
// email or a password.
type Request struct {
	Route     string // the route as in the route table, without a version prefix: "GET /users/{id}"
	Status    int
	Latency   time.Duration
	ColdStart bool
	RequestID string // API Gateway's
	TraceID   string // X-Ray's root trace id
	Caller    string // the caller's user id, "" for none
	Role      string
}

// Logger writes one line per request.
type Logger struct {
	Log      *slog.Logger // nil: slog.Default()
	Function string       // the resource group, the function metrics' dimension
	// Namespace, when set, adds the request's metrics to its line in
	// CloudWatch's embedded metric format (EMF), which CloudWatch Logs
	// turns into metrics with no API call. When Log writes JSON (JSON), the
	// metrics are members of the request's line; otherwise, or when Log
	// leaves the line out for its level, they go to Metrics as a line of
	// their own.
	Namespace string
	JSON      bool
	Metrics   io.Writer
	// Now stamps the metrics; nil means time.Now.
	Now func() time.Time

	once     sync.Once
	declared json.RawMessage
}

// Write writes req's line, with what rec gathered, at INFO for an answer
// below 500, WARN for a dependency's failure (a 5xx with a problem type of
// its own, such as unavailable) and ERROR for an internal error.
func (l *Logger) Write(ctx context.Context, req Request, rec *Record) {
	s := rec.snapshot()
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	level := slog.LevelInfo
	if req.Status >= 500 {
		level = slog.LevelWarn
		if s.problem == "" || s.problem == internalProblem {
			level = slog.LevelError
		}
	}
	metrics := l.metrics(req, s)
	if !log.Enabled(ctx, level) {
		if metrics != nil {
			l.writeMetrics(metrics)
		}
		return
	}
	attrs := make([]slog.Attr, 0, 32)
	attrs = append(attrs,
		slog.String("request_id", req.RequestID),
		slog.String("trace_id", req.TraceID),
		slog.String(DimensionFunction, l.Function),
		slog.String(DimensionRoute, req.Route),
		slog.Int("status", req.Status),
		slog.Float64("latency_ms", milliseconds(req.Latency)),
		slog.Bool("cold_start", req.ColdStart),
	)
	if req.Caller != "" {
		attrs = append(attrs, slog.String("caller", req.Caller), slog.String("role", req.Role))
	}
	if s.version != 0 {
		attrs = append(attrs, slog.Int("version", s.version))
	}
	if s.db.Calls > 0 {
		attrs = append(attrs, slog.Int("dynamodb_calls", s.db.Calls), slog.Float64("dynamodb_units", s.db.Units))
	}
	if s.problem != "" {
		attrs = append(attrs, slog.String("problem", s.problem))
	}
	if s.cause != nil {
		attrs = append(attrs, slog.String("error", s.cause.Error()))
	}
	if metrics != nil && l.JSON {
		for _, m := range metrics.values {
			attrs = append(attrs, slog.Float64(m.name, m.value))
		}
		attrs = append(attrs, slog.Any("_aws", metrics.meta))
	} else if metrics != nil {
		l.writeMetrics(metrics)
	}
	log.LogAttrs(ctx, level, "request", attrs...)
}

// internalProblem is the problem type of an internal error (see
// rest.ProblemType; this package sits below rest).
const internalProblem = "https://quire.dev/problems/internal"

func milliseconds(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// emf is one request's metrics: the values, and the _aws member that
// declares them.
type emf struct {
	route, function string
	values          []metricValue
	meta            emfMeta
}

type metricValue struct {
	name  string
	value float64
}

// emfMeta is the _aws member of an EMF line.
type emfMeta struct {
	Timestamp         int64           `json:"Timestamp"`
	CloudWatchMetrics json.RawMessage `json:"CloudWatchMetrics"`
}

func (l *Logger) metrics(req Request, s snapshot) *emf {
	if l.Namespace == "" {
		return nil
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	one := func(ok bool) float64 {
		if ok {
			return 1
		}
		return 0
	}
	values := []metricValue{
		{Requests, 1},
		{Latency, milliseconds(req.Latency)},
		{ClientErrors, one(req.Status >= 400 && req.Status < 500)},
		{ServerErrors, one(req.Status >= 500)},
	}
	var counted []string
	for _, m := range []metricValue{
		{ColdStarts, one(req.ColdStart)},
		{DynamoDBThrottles, float64(s.db.Throttles)},
		{DynamoDBConflicts, float64(s.db.Conflicts)},
		{DynamoDBRetries, float64(s.db.Retries)},
		{IdempotentReplays, float64(s.counts[IdempotentReplays])},
		{FailedLogins, float64(s.counts[FailedLogins])},
	} {
		if m.value != 0 {
			values = append(values, m)
			counted = append(counted, m.name)
		}
	}
	return &emf{
		route: req.Route, function: l.Function, values: values,
		meta: emfMeta{Timestamp: now().UnixMilli(), CloudWatchMetrics: l.directives(counted)},
	}
}

// writeMetrics writes m as a line of its own.
func (l *Logger) writeMetrics(m *emf) {
	if l.Metrics == nil {
		return
	}
	line := map[string]any{"_aws": m.meta, DimensionRoute: m.route, DimensionFunction: m.function}
	for _, v := range m.values {
		line[v.name] = v.value
	}
	b, _ := json.Marshal(line) // strings, numbers and raw JSON always marshal
	// A line the log cannot take has nowhere else to go.
	_, _ = l.Metrics.Write(append(b, '\n'))
}

// routeMetrics are the metrics of the route, whose one dimension is the
// route; the function's have the function.
var routeMetrics = []string{Requests, Latency, ClientErrors, ServerErrors}

// directive is one member of CloudWatchMetrics.
type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

func declare(names []string) []metric {
	var out []metric
	for _, n := range names {
		unit := "Count"
		if n == Latency {
			unit = "Milliseconds"
		}
		out = append(out, metric{n, unit})
	}
	return out
}

// directives returns the CloudWatchMetrics member of a line: the route's
// metrics, always, and those of the function's metrics that counted
// something. A function metric of 0 is left out: its sums are the same,
// and most lines, which have none, are shorter by a third.
func (l *Logger) directives(counted []string) json.RawMessage {
	l.once.Do(func() {
		l.declared, _ = json.Marshal([]directive{{l.Namespace, [][]string{{DimensionRoute}}, declare(routeMetrics)}})
	})
	if len(counted) == 0 {
		return l.declared
	}
	b, _ := json.Marshal([]directive{
		{l.Namespace, [][]string{{DimensionRoute}}, declare(routeMetrics)},
		{l.Namespace, [][]string{{DimensionFunction}}, declare(counted)},
	})
	return b
}
