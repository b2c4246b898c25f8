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

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
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
// authorizer, the REST API built from the route table with its limits, and
// the web ACL when the CDK context switches it on.
func NewQuireStack(scope constructs.Construct, id string, props *QuireStackProps) awscdk.Stack {
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	limits, waf, cors := stageThrottle(stack), wafEnabled(stack), corsOrigins(stack)
	tables := map[string]awsdynamodb.Table{}
	for _, t := range dynamo.Tables() {
		tables[t.Name] = newTable(stack, t)
	}
	tokens := tokenConfig(stack)
	fns := map[string]awslambda.Function{}
	for _, g := range routes.Groups() {
		fns[g.Name] = newFunction(stack, g, tables, props.AssetDir)
	}
	if origins := cors.Origins(); len(origins) > 0 {
		for _, fn := range fns {
			fn.AddEnvironment(jsii.String("CORS_ORIGINS"), jsii.String(strings.Join(origins, ",")), nil)
		}
	}
	for k, v := range tokenEnv(tokens) {
		fns[routes.GroupAuth].AddEnvironment(jsii.String(k), v, nil)
	}
	keys := newSigningKeys(stack, fns[routes.GroupAuth], tokens, props.AssetDir)
	authorizer := newAuthorizer(stack, tokens, keys.GetAttString(jsii.String("Jwks")), props.AssetDir)
	api := newAPI(stack, fns, authorizer, limits, cors)
	if waf {
		newWebACL(stack, api)
	}
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       api.Url(),
		Description: jsii.String("Base URL of the Quire API"),
	})
	return stack
}

// newTable defines a table from its definition: on demand, with
// point-in-time recovery, and kept when the stack is deleted, as data
// outlives deployments.
func newTable(stack awscdk.Stack, t dynamo.Table) awsdynamodb.Table {
	table := awsdynamodb.NewTable(stack, jsii.String(exportName(t.Name)+"Table"), &awsdynamodb.TableProps{
		PartitionKey: attribute(t.PartitionKey),
		SortKey:      optionalAttribute(t.SortKey),
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
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
// with exactly the grant's actions on its table and the table's indexes.
func newFunction(stack awscdk.Stack, g routes.Group, tables map[string]awsdynamodb.Table, assetDir string) awslambda.Function {
	env := map[string]*string{}
	for _, gr := range g.Grants {
		env[dynamo.TableEnv(gr.Table)] = tables[gr.Table].TableName()
	}
	fn := newLambda(stack, g.Name, g.Description, g.MemoryMB, env, filepath.Join(assetDir, g.Name))
	for _, gr := range g.Grants {
		table := tables[gr.Table]
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(gr.Actions...),
			Resources: &[]*string{table.TableArn(), jsii.String(*table.TableArn() + "/index/*")},
		}))
	}
	return fn
}

// newLambda defines a function (logical id <Name>Function, the name `sam
// local invoke` takes) from the bootstrap in dir, and its log group.
func newLambda(stack awscdk.Stack, name, description string, memoryMB int, env map[string]*string, dir string) awslambda.Function {
	id := exportName(name)
	logs := awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
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
	})
	fn.Node().DefaultChild().(awslambda.CfnFunction).OverrideLogicalId(jsii.String(id + "Function"))
	return fn
}

// newAPI defines the REST API: a method for every route of the table,
// integrated with its group's function, and an ANY method on every path
// integrated with the path's owner, which answers other methods with 405
// and Allow (without it API Gateway answers 403 MISSING_AUTHENTICATION_TOKEN),
// and what browsers need besides (see addBrowserMethods). Protected methods
// run the authorizer first. Each method may take limits requests per
// second, but the costly public routes fewer.
func newAPI(stack awscdk.Stack, fns map[string]awslambda.Function, authorizer awsapigateway.IAuthorizer, limits throttle, cors rest.CORS) awsapigateway.RestApi {
	throttles := methodThrottles(limits)
	api := awsapigateway.NewRestApi(stack, jsii.String("Api"), &awsapigateway.RestApiProps{
		RestApiName:    jsii.String("quire"),
		Description:    jsii.String("Quire: a bookshop with prepaid accounts"),
		CloudWatchRole: jsii.Bool(false),
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		// A function's binary response (the gzip-compressed configuration
		// document), which aws-lambda-go-api-proxy returns base64-encoded,
		// reaches the client as bytes only if the request's first Accept
		// value matches a binary media type; "*/*" matches every one. It
		// also makes API Gateway pass every request body base64-encoded,
		// which the proxy decodes.
		BinaryMediaTypes: jsii.Strings("*/*"),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(stageName),
			ThrottlingRateLimit:  jsii.Number(limits.rate),
			ThrottlingBurstLimit: jsii.Number(limits.burst),
			MethodOptions:        &throttles,
		},
	})
	integrations := map[string]awsapigateway.LambdaIntegration{}
	for group, fn := range fns {
		// One permission per function for the whole API, not one per
		// method: a function's resource policy is limited to 20 KB, which
		// a group's methods in every version would pass.
		integrations[group] = awsapigateway.NewLambdaIntegration(fn, &awsapigateway.LambdaIntegrationOptions{
			Proxy:                   jsii.Bool(true),
			AllowTestInvoke:         jsii.Bool(false),
			ScopePermissionToMethod: jsii.Bool(false),
		})
	}
	for _, path := range routes.Paths() {
		res := api.Root().ResourceForPath(jsii.String(path))
		for _, r := range routes.All() {
			if r.Path == path {
				res.AddMethod(jsii.String(r.Method), integrations[r.Group], methodOptions(r.Access, authorizer))
			}
		}
		res.AddMethod(jsii.String("ANY"), integrations[routes.Owner(path)], methodOptions(routes.PathAccess(path), authorizer))
		addBrowserMethods(res, path, integrations, authorizer)
	}
	addGatewayResponses(api, gatewayCORSHeaders(cors))
	return api
}

// methodOptions says how API Gateway admits callers of a method with access
// a: the one place where authorization attaches. Every method but a public
// one runs the authorizer; whether the token's role may call the route is
// the authorizer's policy's say.
func methodOptions(a routes.Access, authorizer awsapigateway.IAuthorizer) *awsapigateway.MethodOptions {
	if a == routes.Public {
		return &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE}
	}
	return &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_CUSTOM, Authorizer: authorizer}
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
			"Content-Type":  jsii.String("'" + rest.ProblemMediaType + "'"),
			"Cache-Control": jsii.String("'no-store'"),
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
