// Package telemetry is what an operator sees of Quire: one JSON log line per
// request, and CloudWatch metrics in embedded metric format (EMF) written in
// that same line, so that a metric costs no API call and no extra line.
package telemetry

// DefaultNamespace is the metrics' CloudWatch namespace when
// METRICS_NAMESPACE is unset; the stack sets "Quire/<stack name>", so that
// two stacks in one account keep their metrics apart.
const DefaultNamespace = "Quire"

// The dimensions. Every metric has exactly one, so that the number of
// metrics stays fixed: a route's metrics per route of the table (its
// template without a version prefix, "GET /users/{id}"), a function's per
// function (its resource group, "users").
const (
	DimensionRoute    = "route"
	DimensionFunction = "function"
)

// The metrics of a route.
const (
	Requests     = "Requests"     // every answer (Count)
	Latency      = "Latency"      // from the request's arrival in the function to its answer (Milliseconds)
	ClientErrors = "ClientErrors" // 4xx answers (Count)
	ServerErrors = "ServerErrors" // 5xx answers (Count)
)

// The metrics of a function.
const (
	ColdStarts        = "ColdStarts"        // first request of an instance (Count)
	DynamoDBThrottles = "DynamoDBThrottles" // DynamoDB requests refused for capacity (Count)
	DynamoDBConflicts = "DynamoDBConflicts" // transactions cancelled by a conflict with another (Count)
	DynamoDBRetries   = "DynamoDBRetries"   // DynamoDB requests sent again by the SDK (Count)
	IdempotentReplays = "IdempotentReplays" // answers replayed for an idempotency key (Count)
	FailedLogins      = "FailedLogins"      // logins refused for a wrong email or password (Count)
)
