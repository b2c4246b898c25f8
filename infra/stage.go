package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// CDK context keys of what the stage logs and who polls it.
const (
	// contextAccountLogRole: "true" (the default) has the stack set the
	// account's API Gateway CloudWatch Logs role, which the stage's logs
	// need; "false" leaves the account's setting as it is, for an account
	// whose role is managed elsewhere.
	contextAccountLogRole = "quire:apiGatewayAccountRole"
	// contextHealthCheck: "true" (the default) has a Route 53 health check
	// poll GET /health from three Regions; "false" when a load balancer
	// or a monitor of your own polls it.
	contextHealthCheck = "quire:healthCheck"
)

// boolContext reads a boolean from scope's CDK context, or def. It panics
// (failing the synth) on a value that is not a boolean.
func boolContext(scope constructs.Construct, key string, def bool) bool {
	v := scope.Node().TryGetContext(jsii.String(key))
	if v == nil {
		return def
	}
	on, err := strconv.ParseBool(fmt.Sprint(v))
	if err != nil {
		panic(fmt.Sprintf("context %s = %v: want true or false", key, v))
	}
	return on
}

// accessLogFields are the members of each line of the stage's access log:
// one JSON object per request, including those API Gateway answers itself
// (401 from the authorizer, 404, 429). Nothing personal: no IP address,
// user agent, header, query or body; the caller is its user id.
var accessLogFields = map[string]string{
	"request_id":          "$context.requestId", // the functions' request_id, the X-Amzn-Requestid header
	"extended_request_id": "$context.extendedRequestId",
	"trace_id":            "$context.xrayTraceId",
	"time":                "$context.requestTimeEpoch",
	"method":              "$context.httpMethod",
	"route":               "$context.resourcePath", // the template: /users/{id}
	"status":              "$context.status",
	"latency":             "$context.responseLatency", // milliseconds, as the client waited
	"integration_latency": "$context.integrationLatency",
	"integration_status":  "$context.integration.status",
	"response_length":     "$context.responseLength",
	"caller":              "$context.authorizer.principalId",
	"authorizer_status":   "$context.authorizer.status",
	"authorizer_latency":  "$context.authorizer.latency",
	"authorizer_error":    "$context.authorizer.error",
	"error":               "$context.error.message",
	"error_type":          "$context.error.responseType",
	"waf_status":          "$context.waf.status",
}

// accessLogFormat is accessLogFields as an access log format.
func accessLogFormat() awsapigateway.AccessLogFormat {
	b, err := json.Marshal(accessLogFields)
	if err != nil {
		panic(err)
	}
	return awsapigateway.AccessLogFormat_Custom(jsii.String(string(b)))
}

// stageOptions are the stage's settings: its limits, an access log line
// per request in a log group of its own, execution logs for errors only
// (never the requests' bodies: data tracing stays off), a metric set per
// method (detailed metrics), and X-Ray tracing of every request.
// It returns the access log's group too.
func stageOptions(stack awscdk.Stack, limits throttle) (*awsapigateway.StageOptions, awslogs.LogGroup) {
	logs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     logRetention(stack),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	throttles := methodThrottles(limits)
	return &awsapigateway.StageOptions{
		StageName:            jsii.String(stageName),
		ThrottlingRateLimit:  jsii.Number(limits.rate),
		ThrottlingBurstLimit: jsii.Number(limits.burst),
		MethodOptions:        &throttles,
		AccessLogDestination: awsapigateway.NewLogGroupLogDestination(logs),
		AccessLogFormat:      accessLogFormat(),
		LoggingLevel:         awsapigateway.MethodLoggingLevel_ERROR,
		DataTraceEnabled:     jsii.Bool(false),
		MetricsEnabled:       jsii.Bool(true),
		TracingEnabled:       jsii.Bool(true),
	}, logs
}

// newExecutionLogs defines the log group API Gateway writes the stage's
// execution logs to, which it would otherwise create itself, kept forever
// and left behind when the stack is deleted.
func newExecutionLogs(stack awscdk.Stack, api awsapigateway.RestApi) {
	awslogs.NewLogGroup(stack, jsii.String("ApiExecutionLogs"), &awslogs.LogGroupProps{
		LogGroupName: awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("API-Gateway-Execution-Logs_"), api.RestApiId(), jsii.String("/" + stageName),
		}),
		Retention:     logRetention(stack),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
}

// healthCheckRegions are where Route 53 polls from: three, its minimum,
// each polling every 30 seconds.
var healthCheckRegions = []string{"us-east-1", "eu-west-1", "ap-southeast-1"}

// newHealthCheck defines a Route 53 health check of GET /health on the
// stage, so that the health-check alarm has successes to count even
// before a load balancer polls.
func newHealthCheck(stack awscdk.Stack, api awsapigateway.RestApi) {
	host := awscdk.Fn_Join(jsii.String("."), &[]*string{
		api.RestApiId(), jsii.String("execute-api"), stack.Region(), stack.UrlSuffix(),
	})
	awsroute53.NewCfnHealthCheck(stack, jsii.String("HealthCheck"), &awsroute53.CfnHealthCheckProps{
		HealthCheckConfig: &awsroute53.CfnHealthCheck_HealthCheckConfigProperty{
			Type:                     jsii.String("HTTPS"),
			FullyQualifiedDomainName: host,
			Port:                     jsii.Number(443),
			ResourcePath:             jsii.String("/" + stageName + healthPath),
			RequestInterval:          jsii.Number(30),
			FailureThreshold:         jsii.Number(3),
			Regions:                  jsii.Strings(healthCheckRegions...),
		},
	})
}
