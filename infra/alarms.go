package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// contextAlarmEmail is an email address that the alarm topic mails; none
// when unset (subscribe a pager or chat to the topic instead).
const contextAlarmEmail = "quire:alarmEmail"

// thresholds are every alarm's limits, in one place; docs/operating.md's table
// of alarms says the same. Every alarm judges one-minute periods.
var thresholds = struct {
	// MinRequests: a minute with fewer API requests judges no error rate,
	// so that 1 error in 3 requests at night pages no one.
	MinRequests float64
	// ServerErrorRate: the API's 5XX answers over its requests, in 3 of 5
	// minutes.
	ServerErrorRate float64
	// ClientErrorRate: the API's 4XX answers over its requests, in 5 of 5
	// minutes: about 5% is usual (expired tokens, stale ETags); a
	// sustained quarter is a broken client release or someone probing.
	ClientErrorRate float64
	// LatencyP99: the API's 99th percentile latency in milliseconds, in 3
	// of 5 minutes, left unjudged in a minute with too few requests for a
	// p99.
	LatencyP99 float64
	// FunctionErrors: a function's failed invocations (a crash, a
	// timeout: Quire answers its expected failures as problems, so these
	// are never a client's doing) in a minute, in 2 of 3 minutes.
	FunctionErrors float64
	// FunctionThrottles: a function's invocations refused for Lambda
	// concurrency in a minute, in 2 of 3 minutes.
	FunctionThrottles float64
	// TableThrottles: a table's read and write throttle events (its
	// indexes' included) in a minute, in 3 of 5 minutes; the SDK retries
	// a few of them unseen.
	TableThrottles float64
	// TableSystemErrors: a table's requests that DynamoDB failed (HTTP
	// 500) in a minute, in 2 of 3 minutes.
	TableSystemErrors float64
	// Conflicts: transactions cancelled by a conflict with another, all
	// functions together, in a minute, in 3 of 5 minutes.
	Conflicts float64
	// HealthMinutes: minutes in a row without a successful health check.
	HealthMinutes float64
}{
	MinRequests:       20,
	ServerErrorRate:   0.01,
	ClientErrorRate:   0.25,
	LatencyP99:        2000,
	FunctionErrors:    3,
	FunctionThrottles: 1,
	TableThrottles:    10,
	TableSystemErrors: 5,
	Conflicts:         20,
	HealthMinutes:     3,
}

// minute is the alarms' and the dashboard's period. A function, not a
// variable: a jsii call made as the package loads would need Node before
// any test could skip without it.
func minute() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(1)) }

// perMinute is statistic over one-minute periods, the alarms' and the
// dashboard's.
func perMinute(statistic string) *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Period: minute(), Statistic: jsii.String(statistic)}
}

// alarms are the stack's alarms, each telling the topic when it goes off
// and when it recovers.
type alarms struct {
	stack awscdk.Stack
	name  string // starts every alarm's name
	topic awssns.Topic
	all   []awscloudwatch.Alarm
	byID  map[string]awscloudwatch.Alarm // by alarmSpec.id
	// api are the alarms of the whole API, functions' those of each
	// function by name: the alarms a deployment of that function rolls
	// back on.
	api       []awscloudwatch.Alarm
	functions map[string][]awscloudwatch.Alarm
}

// alarmSpec is one alarm: its id (the alarm's name is the Quire stack's
// name, a dash and the id), what it watches, when it goes off, and the first
// thing to check, which every notification carries.
type alarmSpec struct {
	id        string
	metric    awscloudwatch.IMetric
	threshold float64
	of, in    float64 // goes off when of in the last in minutes breach
	below     bool    // breaches below the threshold, not at or above it
	// percentile: a minute with too few data points for the metric's
	// percentile is left unjudged.
	percentile bool
	missing    awscloudwatch.TreatMissingData
	check      string
}

// newAlarms defines, in stack, the alarm topic, mailed at the context's
// address if any, and the alarms on the API, the served functions and the
// tables, each named after the Quire stack name.
func newAlarms(stack awscdk.Stack, name string, api awsapigateway.RestApi, fns map[string]awslambda.Function, tables map[string]awsdynamodb.Table, namespace string) *alarms {
	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Quire alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	if v := stack.Node().TryGetContext(jsii.String(contextAlarmEmail)); v != nil {
		email := fmt.Sprint(v)
		if !strings.Contains(email, "@") {
			panic(fmt.Sprintf("context %s = %v: want an email address", contextAlarmEmail, v))
		}
		sub := topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(email), nil))
		suppress(sub, findingNoRedrive, "An email subscription: a dead-letter queue would keep notifications "+
			"no one reads; each alarm's state and history stay in CloudWatch.")
	}
	a := &alarms{stack: stack, name: name, topic: topic, byID: map[string]awscloudwatch.Alarm{}, functions: map[string][]awscloudwatch.Alarm{}}
	a.api = a.define(apiAlarms(api)...)
	for _, name := range sortedKeys(fns) {
		errors := awscloudwatch.IMetric(fns[name].MetricErrors(perMinute("Sum")))
		if name == authorizerName {
			errors = authorizerFailures(stack, fns[name], namespace)
		}
		a.functions[name] = a.define(functionAlarms(name, fns[name], errors)...)
	}
	for _, name := range sortedKeys(tables) {
		a.define(tableAlarms(name, tables[name])...)
	}
	a.define(conflictAlarm(namespace), healthAlarm(namespace))
	return a
}

// rollback returns the alarms that roll a deployment of the function
// back: its own, and the API's.
func (a *alarms) rollback(function string) []awscloudwatch.Alarm {
	return slices.Concat(a.functions[function], a.api)
}

func (a *alarms) define(specs ...alarmSpec) []awscloudwatch.Alarm {
	var out []awscloudwatch.Alarm
	for _, s := range specs {
		op := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
		if s.below {
			op = awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD
		}
		missing := s.missing
		if missing == "" {
			missing = awscloudwatch.TreatMissingData_NOT_BREACHING
		}
		var lowSamples *string
		if s.percentile {
			lowSamples = jsii.String("ignore")
		}
		alarm := awscloudwatch.NewAlarm(a.stack, jsii.String(exportName(s.id)+"Alarm"), &awscloudwatch.AlarmProps{
			AlarmName:                        jsii.String(a.name + "-" + s.id),
			AlarmDescription:                 jsii.String(s.check),
			Metric:                           s.metric,
			Threshold:                        jsii.Number(s.threshold),
			ComparisonOperator:               op,
			EvaluationPeriods:                jsii.Number(s.in),
			DatapointsToAlarm:                jsii.Number(s.of),
			TreatMissingData:                 missing,
			EvaluateLowSampleCountPercentile: lowSamples,
		})
		action := awscloudwatchactions.NewSnsAction(a.topic)
		alarm.AddAlarmAction(action)
		alarm.AddOkAction(action)
		a.all = append(a.all, alarm)
		a.byID[s.id] = alarm
		out = append(out, alarm)
	}
	return out
}

// rate is errors over the API's requests in a minute, or 0 in a minute
// with fewer than thresholds.MinRequests. Its metrics' ids start with
// class, so that rates of several classes share a graph.
func rate(class string, api awsapigateway.RestApi, errors awscloudwatch.Metric) awscloudwatch.IMetric {
	requests, errs := "requests"+class, "errors"+class
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Label:        jsii.String(class + " rate"),
		Period:       minute(),
		Expression:   jsii.String(fmt.Sprintf("IF(%[1]s >= %[3]v, %[2]s / %[1]s, 0)", requests, errs, thresholds.MinRequests)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{requests: api.MetricCount(perMinute("Sum")), errs: errors},
	})
}

func apiAlarms(api awsapigateway.RestApi) []alarmSpec {
	sum := perMinute("Sum")
	return []alarmSpec{
		{
			id: "api-5xx-rate", metric: rate("5XX", api, api.MetricServerError(sum)),
			threshold: thresholds.ServerErrorRate, of: 3, in: 5,
			check: percent(thresholds.ServerErrorRate) + " or more of the API's answers are 5XX. Check the functions' and tables' alarms, then the access log's " +
				"status, error and integration_status, and the functions' ERROR and WARN lines (problem, error).",
		},
		{
			id: "api-latency-p99", metric: api.MetricLatency(perMinute("p99")),
			threshold: thresholds.LatencyP99, of: 3, in: 5, percentile: true,
			check: fmt.Sprintf("The API's p99 latency is %v ms or more. Compare", thresholds.LatencyP99) + " integration_latency with latency in the access log, then the " +
				"functions' dynamodb_calls, DynamoDBRetries and cold starts, and the slowest trace in X-Ray.",
		},
		{
			id: "api-4xx-rate", metric: rate("4XX", api, api.MetricClientError(sum)),
			threshold: thresholds.ClientErrorRate, of: 5, in: 5,
			check: percent(thresholds.ClientErrorRate) + " or more of the API's answers are 4XX for 5 minutes. Group the access log by status and route: many 401 " +
				"or 403 (a client's tokens, a key rotation), 429 (a client over its limit), 400 or 412 (a client release).",
		},
	}
}

// authorizerFailures are the authorizer's failed invocations but its
// refusals: a token it refuses is an invocation error too (API Gateway
// answers it 401), so that its Errors count every client with an expired
// token and every attacker's junk. Its line for each refusal (authorizer.Refused)
// counts them, through a metric filter on its log group.
func authorizerFailures(stack awscdk.Stack, fn awslambda.Function, namespace string) awscloudwatch.IMetric {
	refusals := awslogs.NewMetricFilter(stack, jsii.String("AuthorizerRefusals"), &awslogs.MetricFilterProps{
		LogGroup:        fn.LogGroup(),
		FilterPattern:   awslogs.FilterPattern_StringValue(jsii.String("$.message"), jsii.String("="), jsii.String(authorizer.Refused)),
		MetricNamespace: jsii.String(namespace),
		MetricName:      jsii.String("AuthorizerRefusals"),
		MetricValue:     jsii.String("1"),
	})
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Label:      jsii.String("authorizer failures"),
		Expression: jsii.String("errors - FILL(refusals, 0)"),
		Period:     minute(),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"errors":   fn.MetricErrors(perMinute("Sum")),
			"refusals": refusals.Metric(perMinute("Sum")),
		},
	})
}

// functionAlarms are a function's alarms, errors its failed invocations.
func functionAlarms(name string, fn awslambda.Function, errors awscloudwatch.IMetric) []alarmSpec {
	sum := perMinute("Sum")
	return []alarmSpec{
		{
			id: name + "-errors", metric: errors, threshold: thresholds.FunctionErrors, of: 2, in: 3,
			check: "The " + name + " function fails invocations (crashes or timeouts, which clients see as 502 or 504). " +
				"Search its log group for ERROR lines and Lambda's own \"Task timed out\"; a new version rolls back on this alarm.",
		},
		{
			id: name + "-throttles", metric: fn.MetricThrottles(sum), threshold: thresholds.FunctionThrottles, of: 2, in: 3,
			check: "Lambda refuses invocations of the " + name + " function: the account's or the function's concurrency is used up. " +
				"Check ConcurrentExecutions on the dashboard, then whether a slow dependency holds instances (latency alarm).",
		},
	}
}

// tableOperations are the DynamoDB operations Quire calls on a table: its
// grants' actions that are operations (a Query of its indexes among them),
// and transactions on any table it writes. CloudWatch counts system errors
// per operation.
func tableOperations(table string) []string {
	ops := map[string]bool{}
	for _, g := range routes.Groups() {
		for _, gr := range g.Grants {
			if gr.Table != table {
				continue
			}
			actions := gr.Actions
			if gr.QueryIndexes {
				actions = append(slices.Clip(actions), routes.QueryAction)
			}
			for _, a := range actions {
				op := strings.TrimPrefix(a, "dynamodb:")
				switch op {
				case "ConditionCheckItem":
					ops["TransactWriteItems"] = true
				case "PutItem", "UpdateItem", "DeleteItem":
					ops["TransactWriteItems"] = true
					ops[op] = true
				default:
					ops[op] = true
				}
			}
		}
	}
	return sortedKeys(ops)
}

func tableAlarms(name string, table awsdynamodb.Table) []alarmSpec {
	// metric is the table's metric, narrowed by the dimension key = value
	// when key is not empty.
	metric := func(name, key, value string) awscloudwatch.Metric {
		d := map[string]*string{"TableName": table.TableName()}
		if key != "" {
			d[key] = jsii.String(value)
		}
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(name), DimensionsMap: &d,
			Period: minute(), Statistic: jsii.String("Sum"),
		})
	}
	// Metric ids are unique across tables, whose metrics share graphs.
	errors := map[string]awscloudwatch.IMetric{}
	var terms []string
	for i, op := range tableOperations(name) {
		id := fmt.Sprintf("%s_errors%d", name, i)
		errors[id] = metric("SystemErrors", "Operation", op)
		terms = append(terms, "FILL("+id+", 0)")
	}
	// The table's throttle events and its indexes': an index that
	// throttles throttles the table's writes.
	throttles := map[string]awscloudwatch.IMetric{}
	var throttleTerms []string
	for i, ix := range append([]string{""}, indexNames(name)...) {
		key := "GlobalSecondaryIndexName"
		if ix == "" {
			key = "" // the table's own
		}
		for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
			id := fmt.Sprintf("%s_%s%d", name, strings.ToLower(m[:4]), i)
			throttles[id] = metric(m, key, ix)
			throttleTerms = append(throttleTerms, "FILL("+id+", 0)")
		}
	}
	return []alarmSpec{
		{
			id: name + "-table-throttles",
			metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Label: jsii.String(name + " throttle events"), Period: minute(),
				Expression:   jsii.String(strings.Join(throttleTerms, " + ")),
				UsingMetrics: &throttles,
			}),
			threshold: thresholds.TableThrottles, of: 3, in: 5,
			check: "DynamoDB throttles the " + name + " table or one of its indexes: a hot key, or traffic past twice its " +
				"previous peak (on-demand). Clients get 503 with Retry-After. Check the table's throttles by operation and " +
				"index on the dashboard and the functions' DynamoDBThrottles; CloudWatch Contributor Insights names hot keys.",
		},
		{
			id: name + "-table-errors",
			metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Label: jsii.String(name + " system errors"), Period: minute(),
				Expression: jsii.String(strings.Join(terms, " + ")), UsingMetrics: &errors,
			}),
			threshold: thresholds.TableSystemErrors, of: 2, in: 3,
			check: "DynamoDB fails requests on the " + name + " table (HTTP 500 on its side). Clients get 503 with Retry-After " +
				"after the SDK's retries. Check the AWS Health Dashboard for DynamoDB in this Region.",
		},
	}
}

// functionSum is the sum of a metric of Quire's own (telemetry) over every
// function that can report it.
func functionSum(namespace, metric, label string) awscloudwatch.IMetric {
	using := map[string]awscloudwatch.IMetric{}
	var terms []string
	for i, g := range routes.Groups() {
		id := fmt.Sprintf("f%d", i)
		using[id] = quireMetric(namespace, metric, telemetry.DimensionFunction, g.Name, "Sum")
		terms = append(terms, "FILL("+id+", 0)")
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Label: jsii.String(label), Period: minute(), Expression: jsii.String(strings.Join(terms, " + ")), UsingMetrics: &using,
	})
}

// quireMetric is one of the metrics the functions write (see telemetry).
func quireMetric(namespace, metric, dimension, value, statistic string) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(namespace), MetricName: jsii.String(metric),
		DimensionsMap: &map[string]*string{dimension: jsii.String(value)},
		Period:        minute(), Statistic: jsii.String(statistic),
	})
}

func conflictAlarm(namespace string) alarmSpec {
	return alarmSpec{
		id: "transaction-conflicts", metric: functionSum(namespace, telemetry.DynamoDBConflicts, "transaction conflicts"),
		threshold: thresholds.Conflicts, of: 3, in: 5,
		check: "Many DynamoDB transactions are cancelled by conflicts with others: many writers on the same items (a popular " +
			"book's stock, one account's balance). Those that still conflict after retries answer 409 or 503. Check " +
			"DynamoDBConflicts by function on the dashboard and the routes of the 409s in the access log.",
	}
}

// healthPath is the path of the health check that a load balancer or the
// stack's Route 53 health check polls, and healthRoute its route.
const (
	healthPath  = "/health"
	healthRoute = "GET " + healthPath
)

func healthAlarm(namespace string) alarmSpec {
	return alarmSpec{
		id: "health-check",
		metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Label: jsii.String("successful health checks"), Period: minute(),
			Expression: jsii.String("FILL(requests, 0) - FILL(failures, 0) - FILL(refused, 0)"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"requests": quireMetric(namespace, telemetry.Requests, telemetry.DimensionRoute, healthRoute, "Sum"),
				"failures": quireMetric(namespace, telemetry.ServerErrors, telemetry.DimensionRoute, healthRoute, "Sum"),
				"refused":  quireMetric(namespace, telemetry.ClientErrors, telemetry.DimensionRoute, healthRoute, "Sum"),
			},
		}),
		threshold: 1, of: thresholds.HealthMinutes, in: thresholds.HealthMinutes, below: true,
		// No health check answered at all is the worst case, not a quiet one.
		missing: awscloudwatch.TreatMissingData_BREACHING,
		check: fmt.Sprintf("No successful %s for %v minutes: DynamoDB", healthRoute, thresholds.HealthMinutes) + " does not answer the health function (503), or nothing " +
			"reaches it (the stage, the health function, or the poller). Try " + healthRoute + " on the ApiUrl output, then the " +
			"health function's log group and the tables' alarms.",
	}
}

// percent writes a rate as a percentage: 0.25 is "25%".
func percent(rate float64) string {
	return fmt.Sprintf("%v%%", rate*100)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
