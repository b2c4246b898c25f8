package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// QuireStackProps configures the stack.
type QuireStackProps struct {
	awscdk.StackProps
	// AssetDir holds <group>/bootstrap for every resource group, as
	// `make build` writes them into build/.
	AssetDir string
}

// stageName is the API's one stage: the first segment of its execute-api
// URL's paths.
const stageName = "prod"

// NewQuireStack defines Quire: the tables, one function per resource group
// with only the table actions it uses, the signing keys and the
// authorizer, the REST API built from the route table with its limits and
// logs, and the web ACL when the CDK context switches it on; and what
// operates it: the alarms and their topic, the dashboard, a health check,
// and a CodeDeploy deployment per served function that rolls back on its
// alarms.
func NewQuireStack(scope constructs.Construct, id string, props *QuireStackProps) awscdk.Stack {
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	limits, waf, cors := stageThrottle(stack), boolContext(stack, contextWAF, stagePreset(stack).waf), corsOrigins(stack)
	deployment, perToken := deploymentConfig(stack), perTokenLimit(stack)
	namespace := telemetry.DefaultNamespace + "/" + *stack.StackName()
	tables := map[string]awsdynamodb.Table{}
	for _, t := range dynamo.Tables() {
		tables[t.Name] = newTable(stack, t)
	}
	deadLetters := newEvents(stack, tables[routes.TableEvents], props.AssetDir)
	tokens := tokenConfig(stack)
	fns := map[string]awslambda.Function{}
	for _, g := range routes.Groups() {
		fn := newFunction(stack, g, tables, props.AssetDir)
		fn.AddEnvironment(jsii.String("METRICS_NAMESPACE"), jsii.String(namespace), nil)
		if origins := cors.Origins(); len(origins) > 0 {
			fn.AddEnvironment(jsii.String("CORS_ORIGINS"), jsii.String(strings.Join(origins, ",")), nil)
		}
		fns[g.Name] = fn
	}
	for k, v := range tokenEnv(tokens) {
		fns[routes.GroupAuth].AddEnvironment(jsii.String(k), v, nil)
	}
	keys := newSigningKeys(stack, fns[routes.GroupAuth], tokens, props.AssetDir)
	fns[authorizerName] = newAuthorizerFunction(stack, tokens, keys.GetAttString(jsii.String("Jwks")), props.AssetDir)
	aliases := map[string]awslambda.Alias{}
	for name, fn := range fns {
		aliases[name] = newAlias(stack, name, fn)
	}
	stage, accessLogs := stageOptions(stack, limits)
	api := newAPI(stack, aliases, tokens, stage,
		boolContext(stack, contextAccountLogRole, true), cors)
	newExecutionLogs(stack, api)
	if waf {
		newWebACL(stack, api, perToken)
	} else {
		suppress(api.DeploymentStage(), findingNoWAF, "The web ACL is optional (-c quire:waf=true): AWS WAF bills "+
			"by the month; API Gateway's method throttling limits the costly public routes without it.")
	}
	// What operates the API has a stack of its own, nested in this one,
	// which the API's methods leave little room in (TestQuotas).
	ops := awscdk.NewNestedStack(stack, jsii.String("Operations"), &awscdk.NestedStackProps{
		Description: jsii.String("Quire's alarms and their topic, the dashboard, saved log queries and the health check"),
	})
	if boolContext(stack, contextHealthCheck, true) {
		newHealthCheck(ops, api)
	}
	alarms := newAlarms(ops, *stack.StackName(), api, fns, tables, namespace)
	alarms.define(deadLetterAlarm(deadLetters))
	newDeployments(stack, aliases, deployment, alarms, props.AssetDir)
	dashboard := newDashboard(ops, *stack.StackName(), api, fns, tables, namespace, alarms)
	newQueries(ops, *stack.StackName(), accessLogs, fns)
	output(stack, "ApiUrl", "Base URL of the Quire API", api.Url())
	output(stack, "DashboardUrl", "The CloudWatch dashboard of this stack", awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("https://console.aws.amazon.com/cloudwatch/home?region="), stack.Region(),
		jsii.String("#dashboards:name="), dashboard.DashboardName(),
	}))
	output(stack, "AlarmTopicArn", "The SNS topic every alarm notifies: subscribe a pager or a chat to it", alarms.topic.TopicArn())
	return stack
}

// output defines one of the stack's outputs.
func output(stack awscdk.Stack, id, description string, value *string) {
	awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
}

// newTable defines a table from its definition: on demand, with
// point-in-time recovery; on a production stage (see retainTables) kept
// when the stack is deleted, as data outlives deployments, and protected
// from deletion by anyone until the protection is turned off.
func newTable(stack awscdk.Stack, t dynamo.Table) awsdynamodb.Table {
	retain, removal := retainTables(stack), awscdk.RemovalPolicy_DESTROY
	if retain {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	var stream awsdynamodb.StreamViewType
	if t.Stream {
		stream = awsdynamodb.StreamViewType_NEW_IMAGE
	}
	table := awsdynamodb.NewTable(stack, jsii.String(exportName(t.Name)+"Table"), &awsdynamodb.TableProps{
		Stream:       stream,
		PartitionKey: attribute(t.PartitionKey),
		SortKey:      optionalAttribute(t.SortKey),
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		RemovalPolicy:      removal,
		DeletionProtection: jsii.Bool(retain),
	})
	if t.TTL != "" {
		table.Node().DefaultChild().(awsdynamodb.CfnTable).SetTimeToLiveSpecification(&awsdynamodb.CfnTable_TimeToLiveSpecificationProperty{
			AttributeName: jsii.String(t.TTL), Enabled: jsii.Bool(true),
		})
	}
	for _, ix := range t.Indexes {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   attribute(ix.PartitionKey),
			SortKey:        optionalAttribute(ix.SortKey),
			ProjectionType: projection(ix),
		})
	}
	return table
}

// projection is ix's projection type in CDK's terms.
func projection(ix dynamo.Index) awsdynamodb.ProjectionType {
	if ix.KeysOnly {
		return awsdynamodb.ProjectionType_KEYS_ONLY
	}
	return awsdynamodb.ProjectionType_ALL
}

func attribute(k dynamo.Key) *awsdynamodb.Attribute {
	typ := awsdynamodb.AttributeType_STRING
	if k.Type == "N" {
		typ = awsdynamodb.AttributeType_NUMBER
	}
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: typ}
}

func optionalAttribute(k *dynamo.Key) *awsdynamodb.Attribute {
	if k == nil {
		return nil
	}
	return attribute(*k)
}

// newFunction defines a group's function with one IAM statement per grant,
// with exactly the grant's actions on its table, and one more with
// routes.QueryAction alone on the table's indexes when the grant has
// QueryIndexes:
// what routes.Group.Allows allows, which dynamo.Enforce holds the function
// to outside AWS.
func newFunction(stack awscdk.Stack, g routes.Group, tables map[string]awsdynamodb.Table, assetDir string) awslambda.Function {
	env := map[string]*string{}
	for _, gr := range g.Grants {
		env[dynamo.TableEnv(gr.Table)] = tables[gr.Table].TableName()
	}
	if len(g.Grants) > 0 {
		// Empty, as AWS's DynamoDB needs, but declared: `sam local
		// invoke` passes a function only the variables its template
		// declares, and its --env-vars file names DynamoDB Local here
		// (see api.SAMEnv).
		env["DYNAMODB_ENDPOINT"] = jsii.String("")
	}
	fn := newLambda(stack, g.Name, g.Description, g.MemoryMB, env, filepath.Join(assetDir, g.Name))
	for _, gr := range g.Grants {
		table := tables[gr.Table]
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(gr.Actions...),
			Resources: &[]*string{table.TableArn()},
		}))
		var indexes []*string
		for _, ix := range indexNames(gr.Table) {
			indexes = append(indexes, jsii.String(*table.TableArn()+"/index/"+ix))
		}
		if len(indexes) > 0 && gr.QueryIndexes {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings(routes.QueryAction),
				Resources: &indexes,
			}))
		}
	}
	return fn
}

// indexNames are the names of the indexes of the table named table.
func indexNames(table string) []string {
	var out []string
	for _, t := range dynamo.Tables() {
		if t.Name == table {
			for _, ix := range t.Indexes {
				out = append(out, ix.Name)
			}
		}
	}
	return out
}

// newLambda defines a function (logical id <Name>Function, the name `sam
// local invoke` takes) from the bootstrap in dir, and its log group.
func newLambda(stack awscdk.Stack, name, description string, memoryMB int, env map[string]*string, dir string) awslambda.Function {
	id := exportName(name)
	logs := awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     logRetention(stack),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	fn := awslambda.NewFunction(stack, jsii.String(id+"Function"), &awslambda.FunctionProps{
		Description:  jsii.String(description),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(dir), nil),
		MemorySize:   jsii.Number(memoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(apigw.FunctionTimeout.Seconds())),
		Environment:  &env,
		LogGroup:     logs,
		// JSON lines (see telemetry.Logger), at INFO: Lambda passes the
		// level to the function as AWS_LAMBDA_LOG_LEVEL; its own platform
		// lines only from WARN.
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: awslambda.ApplicationLogLevel_INFO,
		SystemLogLevelV2:      awslambda.SystemLogLevel_WARN,
		// Each invocation is a segment of the request's X-Ray trace, whose
		// id every log line carries.
		Tracing: awslambda.Tracing_ACTIVE,
	})
	fn.Node().DefaultChild().(awslambda.CfnFunction).OverrideLogicalId(jsii.String(id + "Function"))
	suppress(fn, findingNoDLQ, "Invoked synchronously only (by API Gateway; by CloudFormation for the keys "+
		"function; by the events pipe, whose own dead-letter queue keeps what fails, for the events function): the "+
		"caller receives the failure; a dead-letter queue holds asynchronous events only.")
	suppress(fn.Role(), findingLambdaLogging, "AWS's minimal policy for a function's logs: logs:CreateLogGroup, "+
		"CreateLogStream and PutLogEvents.")
	suppress(fn.Role(), findingTracingOnAny, "Active tracing: xray:PutTraceSegments and PutTelemetryRecords "+
		"have no resource-level permissions.")
	return fn
}

// newAPI defines the REST API: a method for every route of the table,
// integrated with its group's function through the function's alias in
// aliases, and an ANY method on every path integrated with the path's
// owner, which answers other methods with 405 and Allow (without it API
// Gateway answers 403 MISSING_AUTHENTICATION_TOKEN), and what browsers
// need besides: OPTIONS, public (preflights carry no token) and answered
// by the path's owner (see rest.CORS.Handler), and HEAD where ANY would
// not serve it as the GET (headMethod). Protected methods run the
// authorizer (newAuthorizer), on tokens of tokens, first. The stage takes
// the limits, logs and tracing of stage; accountLogRole has the stack set
// the account's logging role.
func newAPI(stack awscdk.Stack, aliases map[string]awslambda.Alias, tokens login.TokenConfig, stage *awsapigateway.StageOptions, accountLogRole bool, cors rest.CORS) awsapigateway.RestApi {
	// The stage's logs need the account's API Gateway CloudWatch Logs role.
	// The role and the account setting outlive the stack: other APIs of
	// the account may log through them.
	var keepRole awscdk.RemovalPolicy
	if accountLogRole {
		keepRole = awscdk.RemovalPolicy_RETAIN
	}
	api := awsapigateway.NewRestApi(stack, jsii.String("Api"), &awsapigateway.RestApiProps{
		// The name is the API's metrics' dimension: one per stack.
		RestApiName:                 jsii.String(strings.ToLower(*stack.StackName())),
		Description:                 jsii.String("Quire: a bookshop with prepaid accounts"),
		CloudWatchRole:              jsii.Bool(accountLogRole),
		CloudWatchRoleRemovalPolicy: keepRole,
		EndpointTypes:               &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		// A function's binary response (the gzip-compressed configuration
		// document), which aws-lambda-go-api-proxy returns base64-encoded,
		// reaches the client as bytes only if the request's first Accept
		// value matches a binary media type; "*/*" matches every one. It
		// also makes API Gateway pass every request body base64-encoded,
		// which the proxy decodes.
		BinaryMediaTypes: jsii.Strings("*/*"),
		DeployOptions:    stage,
	})
	authorizer := newAuthorizer(stack, api, aliases[authorizerName], tokens)
	integrations := map[string]awsapigateway.Integration{}
	for _, g := range routes.Groups() {
		alias := aliases[g.Name]
		integrations[g.Name] = awsapigateway.NewIntegration(&awsapigateway.IntegrationProps{
			Type:                  awsapigateway.IntegrationType_AWS_PROXY,
			IntegrationHttpMethod: jsii.String("POST"),
			Uri: awscdk.Fn_Join(jsii.String(""), &[]*string{
				jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":apigateway:"), awscdk.Aws_REGION(),
				jsii.String(":lambda:path/2015-03-31/functions/"), alias.FunctionArn(), jsii.String("/invocations"),
			}),
		})
		// One permission per function for the whole API, not one per
		// method: a function's resource policy is limited to 20 KB, which
		// a group's methods in every version would pass.
		alias.AddPermission(jsii.String("ApiInvoke"), &awslambda.Permission{
			Principal: awsiam.NewServicePrincipal(jsii.String("apigateway.amazonaws.com"), nil),
			SourceArn: api.ArnForExecuteApi(jsii.String("*"), jsii.String("/*"), jsii.String("*")),
		})
	}
	// Every version's routes are one tree of resources, /api/{version}/...
	// (routes.Gateway): a method serves each version, which its function
	// checks. That tree and the tree of the paths without a version are
	// each a stack of their own, nested in this one (routeStacks), so that
	// the API's methods take little of the stack's 500 resources and each
	// tree has 500 of its own. API Gateway serves a change of methods only
	// once a new deployment is made, and CDK hashes into the deployment's
	// logical id only the methods of this stack: the deployment waits for
	// the nested stacks, and their templates' URLs, which hold a hash of
	// each template's content, go into its logical id.
	trees := map[string]awsapigateway.IRestApi{}
	for _, path := range routes.GatewayPaths() {
		res := api.Root()
		if path != "/" {
			name := routeStack(path)
			tree, ok := trees[name]
			if !ok {
				nested := awscdk.NewNestedStack(stack, jsii.String(name), &awscdk.NestedStackProps{
					Description: jsii.String("Quire's API resources and methods: " + routeStacks[name]),
				})
				tree = awsapigateway.RestApi_FromRestApiAttributes(nested, jsii.String("Api"), &awsapigateway.RestApiAttributes{
					RestApiId: api.RestApiId(), RootResourceId: api.RestApiRootResourceId(),
				})
				trees[name] = tree
				api.LatestDeployment().Node().AddDependency(nested)
				api.LatestDeployment().AddToLogicalId(nested.NestedStackResource().(awscdk.CfnStack).TemplateUrl())
			}
			res = tree.Root().ResourceForPath(jsii.String(path))
		}
		added := map[string]bool{}
		for _, r := range routes.All() {
			if g, _ := routes.Gateway(r.Path); g == path && !added[r.Method] {
				added[r.Method] = true
				addMethod(res, r.Method, integrations[r.Group], r.Access, authorizer)
			}
		}
		addMethod(res, "ANY", integrations[routes.Owner(path)], routes.PathAccess(path), authorizer)
		addMethod(res, "OPTIONS", integrations[routes.Owner(path)], routes.Public, authorizer)
		if get, ok := headMethod(path); ok {
			addMethod(res, "HEAD", integrations[get.Group], get.Access, authorizer)
		}
	}
	addGatewayResponses(api, gatewayCORSHeaders(cors))
	suppressAPI(api)
	for _, tree := range trees {
		suppressAPI(tree)
	}
	if role := api.Node().TryFindChild(jsii.String("CloudWatchRole")); role != nil {
		suppress(role, findingGatewayLogging, "AWS's policy for API Gateway's account-wide logging role: it "+
			"writes the stage's access and execution logs.")
	}
	return api
}

// routeStacks are the stacks nested in Quire's that hold the API's
// resources and methods but the root's, by name: what each holds.
var routeStacks = map[string]string{
	"Routes":          "the paths without a version",
	"VersionedRoutes": "the paths of every version, /api/{version}/...",
}

// routeStack names the nested stack that holds path's resource. A path
// stays in its stack for good: moving it to another, in a stack already
// deployed, would have CloudFormation create it there before deleting it
// here, which API Gateway refuses (a path twice).
func routeStack(path string) string {
	if strings.HasPrefix(path, "/api/") {
		return "VersionedRoutes"
	}
	return "Routes"
}

// suppressAPI records why cdk-nag's findings on the API's methods, under c
// once they are defined, do not apply.
func suppressAPI(c constructs.IConstruct) {
	suppress(c, findingNoCognito, "Protected methods run a Lambda REQUEST authorizer that verifies Quire's own "+
		"tokens (issued by POST /login, signed with keys the stack keeps); Quire has no Cognito user pool.")
	suppress(c, findingNoValidator, "Each function validates its requests and answers 400 problem+json naming "+
		"each invalid field, which API Gateway's validator cannot; an invalid request costs one short invocation.")
}

// addMethod adds the method verb with access a to res: the one place
// where authorization attaches. Every method but a public one runs the
// authorizer; whether the token's role may call the route is the
// authorizer's policy's say.
func addMethod(res awsapigateway.IResource, verb string, integration awsapigateway.Integration, a routes.Access, authorizer awsapigateway.IAuthorizer) {
	if a != routes.Public {
		res.AddMethod(jsii.String(verb), integration, &awsapigateway.MethodOptions{
			AuthorizationType: awsapigateway.AuthorizationType_CUSTOM, Authorizer: authorizer,
		})
		return
	}
	m := res.AddMethod(jsii.String(verb), integration, &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE})
	suppress(m, findingNoAuthorizer, "A public route of the contract (login, sign-up, health, landing, keys, docs) "+
		"or a CORS preflight, which browsers send without credentials.")
}

// gatewayResponse is one API Gateway error rewritten as problem+json.
type gatewayResponse struct {
	typ     awsapigateway.ResponseType
	status  int // 0 keeps the status of the error
	code    string
	detail  string // a template expression or a JSON literal
	headers map[string]string
}

func gatewayResponses() []gatewayResponse {
	const message = "$context.error.messageString" // already a quoted JSON string
	retry := map[string]string{"Retry-After": "1"}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []gatewayResponse{
		{awsapigateway.ResponseType_UNAUTHORIZED(), 401, quire.EUNAUTHORIZED, quoted(apigw.DetailUnauthorized),
			map[string]string{"WWW-Authenticate": rest.BearerChallenge}},
		{awsapigateway.ResponseType_ACCESS_DENIED(), 403, quire.EFORBIDDEN, quoted(apigw.DetailForbidden), nil},
		{awsapigateway.ResponseType_DEFAULT_4XX(), 0, quire.EINVALID, message, nil},
		{awsapigateway.ResponseType_DEFAULT_5XX(), 0, quire.EGATEWAY, message, nil},
		{awsapigateway.ResponseType_MISSING_AUTHENTICATION_TOKEN(), 404, quire.ENOTFOUND, `"No resource at this path."`, nil},
		{awsapigateway.ResponseType_RESOURCE_NOT_FOUND(), 404, quire.ENOTFOUND, `"No resource at this path."`, nil},
		{awsapigateway.ResponseType_REQUEST_TOO_LARGE(), 413, quire.ETOOLARGE, message, nil},
		{awsapigateway.ResponseType_UNSUPPORTED_MEDIA_TYPE(), 415, quire.EMEDIATYPE, message, nil},
		{awsapigateway.ResponseType_THROTTLED(), 429, quire.ETHROTTLED, message, retry},
		{awsapigateway.ResponseType_QUOTA_EXCEEDED(), 429, quire.ETHROTTLED, message, retry},
		// A request a web ACL blocks without a response of its own (the
		// stack's, or one Firewall Manager attaches).
		{awsapigateway.ResponseType_WAF_FILTERED(), 403, quire.EFORBIDDEN, quoted("A web application firewall refused this request."), nil},
	}
}

// addGatewayResponses adds gatewayResponses, each with the headers cors
// (response parameter expressions; see gatewayCORSHeaders).
func addGatewayResponses(api awsapigateway.RestApi, cors map[string]string) {
	for _, g := range gatewayResponses() {
		headers := map[string]*string{
			"Content-Type":           jsii.String("'" + rest.ProblemMediaType + "'"),
			"Cache-Control":          jsii.String("'no-store'"),
			"X-Content-Type-Options": jsii.String("'nosniff'"),
		}
		for k, v := range g.headers {
			headers[k] = jsii.String("'" + v + "'")
		}
		for k, v := range cors {
			headers[k] = jsii.String(v)
		}
		var status *string
		if g.status != 0 {
			status = jsii.String(fmt.Sprint(g.status))
		}
		api.AddGatewayResponse(jsii.String(exportName(strings.ToLower(*g.typ.ResponseType()))), &awsapigateway.GatewayResponseOptions{
			Type:            g.typ,
			StatusCode:      status,
			ResponseHeaders: &headers,
			Templates: &map[string]*string{
				"application/json": jsii.String(rest.GatewayProblem(g.code, g.status, g.detail)),
			},
		})
	}
}

// exportName turns "users" into "Users" and "default_4xx" into
// "Default4xx", for construct ids.
func exportName(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
