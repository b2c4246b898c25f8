package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/telemetry"
)

// newDashboard defines the stack's one CloudWatch dashboard, read from the
// top at 3 a.m.: the alarms; the API's traffic, errors and latency; each
// route's (Quire's metrics); each function's invocations, errors,
// throttles, duration and concurrency; what the functions met in DynamoDB
// and at login; each table's throttles, errors and units. It is named
// after the Quire stack name and the Region (dashboards are global).
func newDashboard(stack awscdk.Stack, name string, api awsapigateway.RestApi, fns map[string]awslambda.Function, tables map[string]awsdynamodb.Table, namespace string, alarms *alarms) awscloudwatch.Dashboard {
	dash := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   awscdk.Fn_Join(jsii.String("-"), &[]*string{jsii.String(name), stack.Region()}),
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	var alarmRefs []interfacesawscloudwatch.IAlarmRef
	for _, a := range alarms.all {
		alarmRefs = append(alarmRefs, a)
	}
	dash.AddWidgets(awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
		Title: jsii.String("Alarms"), Alarms: &alarmRefs, Width: jsii.Number(24), Height: jsii.Number(4),
		SortBy: awscloudwatch.AlarmStatusWidgetSortBy_STATE_UPDATED_TIMESTAMP,
	}))

	sum := perMinute("Sum")
	stat := func(s string) *awscloudwatch.MetricOptions {
		o := perMinute(s)
		o.Label = jsii.String(s)
		return o
	}
	dash.AddWidgets(
		graph("API requests and errors", api.MetricCount(sum), api.MetricClientError(sum), api.MetricServerError(sum)),
		graph("API latency (ms)", api.MetricLatency(stat("p50")), api.MetricLatency(stat("p99")),
			api.MetricIntegrationLatency(stat("p99"))),
		graph("Error rates", alarmMetric(alarms, "api-5xx-rate"), alarmMetric(alarms, "api-4xx-rate")),
	)

	search := func(metric, dimension, statistic string) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', '%s', 60)`, namespace, dimension, metric, statistic)),
			Label:      jsii.String(""),
			Period:     minute(),
		})
	}
	dash.AddWidgets(
		graph("Requests by route", search(telemetry.Requests, telemetry.DimensionRoute, "Sum")),
		graph("p99 latency by route (ms, in the function)", search(telemetry.Latency, telemetry.DimensionRoute, "p99")),
		graph("5XX by route", search(telemetry.ServerErrors, telemetry.DimensionRoute, "Sum")),
		graph("4XX by route", search(telemetry.ClientErrors, telemetry.DimensionRoute, "Sum")),
	)

	perFunction := func(m func(awslambda.Function) awscloudwatch.Metric) []awscloudwatch.IMetric {
		var out []awscloudwatch.IMetric
		for _, name := range sortedKeys(fns) {
			out = append(out, m(fns[name]).With(&awscloudwatch.MetricOptions{Label: jsii.String(name)}))
		}
		return out
	}
	dash.AddWidgets(
		graph("Invocations", perFunction(func(f awslambda.Function) awscloudwatch.Metric { return f.MetricInvocations(sum) })...),
		graph("Function errors", perFunction(func(f awslambda.Function) awscloudwatch.Metric { return f.MetricErrors(sum) })...),
		graph("Function throttles", perFunction(func(f awslambda.Function) awscloudwatch.Metric { return f.MetricThrottles(sum) })...),
		graph("p99 duration (ms)", perFunction(func(f awslambda.Function) awscloudwatch.Metric { return f.MetricDuration(stat("p99")) })...),
	)
	concurrency := perFunction(func(f awslambda.Function) awscloudwatch.Metric {
		return f.Metric(jsii.String("ConcurrentExecutions"), stat("Maximum"))
	})
	dash.AddWidgets(
		graph("Concurrent executions", concurrency...),
		graph("Cold starts", search(telemetry.ColdStarts, telemetry.DimensionFunction, "Sum")),
		graph("DynamoDB throttles, conflicts and retries seen by the functions",
			search(telemetry.DynamoDBThrottles, telemetry.DimensionFunction, "Sum"),
			search(telemetry.DynamoDBConflicts, telemetry.DimensionFunction, "Sum"),
			search(telemetry.DynamoDBRetries, telemetry.DimensionFunction, "Sum")),
		graph("Idempotent replays and failed logins",
			search(telemetry.IdempotentReplays, telemetry.DimensionFunction, "Sum"),
			search(telemetry.FailedLogins, telemetry.DimensionFunction, "Sum")),
	)

	var throttles, errors, reads, writes []awscloudwatch.IMetric
	for _, name := range sortedKeys(tables) {
		t := tables[name]
		throttles = append(throttles, alarmMetric(alarms, name+"-table-throttles"))
		errors = append(errors, alarmMetric(alarms, name+"-table-errors"))
		label := perMinute("Sum")
		label.Label = jsii.String(name)
		reads = append(reads, t.MetricConsumedReadCapacityUnits(label))
		writes = append(writes, t.MetricConsumedWriteCapacityUnits(label))
	}
	dash.AddWidgets(
		graph("Table throttle events", throttles...),
		graph("Table system errors", errors...),
		graph("Read units consumed", reads...),
		graph("Write units consumed", writes...),
	)
	return dash
}

// newQueries saves the Logs Insights queries of docs/operating.md's
// "Finding a request", named "<stack>/...", over the access log and the
// functions' logs, so that an operator finds them in the console ready to
// run.
func newQueries(stack awscdk.Stack, name string, accessLogs awslogs.ILogGroup, fns map[string]awslambda.Function) {
	groups := []interfacesawslogs.ILogGroupRef{accessLogs}
	for _, n := range sortedKeys(fns) {
		groups = append(groups, fns[n].LogGroup())
	}
	for _, q := range []struct {
		id    string
		query awslogs.QueryStringProps
	}{
		{"find-request", awslogs.QueryStringProps{
			Fields: jsii.Strings("@timestamp", "@log", "status", "route", "latency", "latency_ms", "integration_latency",
				"authorizer_error", "error", "problem", "trace_id"),
			FilterStatements: jsii.Strings(`request_id = "put the X-Amzn-Requestid here"`),
			Sort:             jsii.String("@timestamp asc"),
		}},
		{"slowest-routes", awslogs.QueryStringProps{
			FilterStatements: jsii.Strings(`ispresent(latency_ms)`),
			StatsStatements:  jsii.Strings("pct(latency_ms, 99) as p99, count(*) as requests by route"),
			Sort:             jsii.String("p99 desc"),
		}},
		{"failures", awslogs.QueryStringProps{
			// The functions' WARN and ERROR lines, and the access lines of
			// the errors API Gateway answered itself (a missing value is
			// "-" there).
			FilterStatements: jsii.Strings(`level in ["WARN", "ERROR"] or (ispresent(error_type) and error_type != "-")`),
			StatsStatements:  jsii.Strings("count(*) as requests by route, problem, error, error_type"),
			Sort:             jsii.String("requests desc"),
		}},
	} {
		awslogs.NewQueryDefinition(stack, jsii.String(exportName(q.id)+"Query"), &awslogs.QueryDefinitionProps{
			QueryDefinitionName: jsii.String(name + "/" + q.id),
			QueryString:         awslogs.NewQueryString(&q.query),
			LogGroups:           &groups,
		})
	}
}

// graph is a dashboard graph a quarter of a row wide (a third with three
// in a row: CloudWatch lays widgets out left to right).
func graph(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title), Left: &metrics, Width: jsii.Number(6), Height: jsii.Number(6),
	})
}

// alarmMetric is the metric the alarm with id watches.
func alarmMetric(a *alarms, id string) awscloudwatch.IMetric {
	al, ok := a.byID[id]
	if !ok {
		panic("no alarm " + id)
	}
	return al.Metric()
}
