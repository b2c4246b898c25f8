package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// CDK context keys of the stack's request limits.
const (
	// contextThrottleRate is the stage's default steady rate, in requests
	// per second: the limit of each method without one of its own.
	contextThrottleRate = "quire:throttleRate"
	// contextThrottleBurst is the stage's default burst, in requests.
	contextThrottleBurst = "quire:throttleBurst"
	// contextWAF switches the web ACL on ("true") or off; a production
	// stage's preset has it on, a development stage's off, as AWS WAF
	// bills by the month (see docs/deploying.md).
	contextWAF = "quire:waf"
	// contextPerTokenLimit is how many requests one bearer token may send
	// in wafWindow when the web ACL is on: a whole number WAF takes.
	contextPerTokenLimit = "quire:perTokenLimit"
)

// throttle is an API Gateway token bucket: a steady rate in requests per
// second, and a burst.
type throttle struct {
	rate  float64
	burst int
}

// defaultThrottle is the stage's default: it bounds the bill of a mistake;
// raise it for real traffic. maxThrottle is API Gateway's default account
// quota per Region, which no stage goes past.
var (
	defaultThrottle = throttle{rate: 100, burst: 200}
	maxThrottle     = throttle{rate: 10000, burst: 5000}
)

// stageThrottle returns the stage's default throttle, from the CDK context
// or the default. It panics (failing the synth) on a value that is not a
// number within bounds: a rate from 1 to 10,000, a whole burst from 1 to
// 5,000.
func stageThrottle(stack awscdk.Stack) throttle {
	t := defaultThrottle
	if v := stack.Node().TryGetContext(jsii.String(contextThrottleRate)); v != nil {
		r, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		if err != nil || !(r >= 1 && r <= maxThrottle.rate) {
			panic(fmt.Sprintf("context %s = %v: want requests per second from 1 to %v", contextThrottleRate, v, maxThrottle.rate))
		}
		t.rate = r
	}
	if v := stack.Node().TryGetContext(jsii.String(contextThrottleBurst)); v != nil {
		b, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || b < 1 || b > maxThrottle.burst {
			panic(fmt.Sprintf("context %s = %v: want a whole number of requests from 1 to %d", contextThrottleBurst, v, maxThrottle.burst))
		}
		t.burst = b
	}
	return t
}

// defaultPerToken is the requests a bearer token may send in wafWindow:
// 5 a second, kept up for 5 minutes. A person's session sends a few
// requests a second at most, in bursts between pages, and far fewer over 5
// minutes (the benchmark's active client sends one every 10 s or so); an
// integration paging through orders or filling the catalogue gets 5 a
// second sustained. It is a 20th of what the stage's default throttle lets
// through in the window, so that one token, leaked or looping, takes at
// most a 20th of the stage. minRateLimit and maxRateLimit are WAF's bounds
// on a rate-based rule's limit.
const (
	defaultPerToken = 1500
	minRateLimit    = 10
	maxRateLimit    = 2_000_000_000
)

// perTokenLimit returns the per-token limit, from the CDK context or the
// default. It panics (failing the synth, with the web ACL on or off) on a
// value that is not a whole number from 10 to 2,000,000,000.
func perTokenLimit(stack awscdk.Stack) int {
	v := stack.Node().TryGetContext(jsii.String(contextPerTokenLimit))
	if v == nil {
		return defaultPerToken
	}
	// A JSON number of cdk.json is a float64 (2e+09 in fmt's words).
	n, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	if err != nil || n != math.Trunc(n) || !(n >= minRateLimit && n <= maxRateLimit) {
		panic(fmt.Sprintf("context %s = %v: want a whole number of requests per %d s from %d to %d",
			contextPerTokenLimit, v, wafWindow, minRateLimit, maxRateLimit))
	}
	return int(n)
}

// costlyRoute is a public route on which every request costs Quire real
// work whoever sends it: an argon2id hash (19 MiB, about 25 ms), or the
// minting of tokens. Each is limited twice: across all clients by API
// Gateway, so that a flood of it takes its own small share of the API and
// of the account's Lambda concurrency, not the stage's whole rate; and, when
// the web ACL is on, per client IP address by AWS WAF, so that one address
// cannot use the route up for everyone else.
type costlyRoute struct {
	key   string   // the route as routes.Route.Key gives it, without a version prefix
	name  string   // names its WAF rule and metric
	limit throttle // API Gateway's limit on the method, across all clients
	// perIP is WAF's limit per client IP address and wafWindow: a 30th of
	// what limit lets through in the window, so that it takes 30 addresses
	// to use the route up.
	perIP int
}

// costlyRoutes are the routes limited below the stage's default, each in
// the route table (TestPublicPostsAreLimited).
//   - Login hashes the password: 10 a second is 36,000 logins an hour, far
//     more than a bookshop sees, and a burst of 20 lets everyone log in
//     again at once after a signing key rotation.
//   - Trading a refresh token keeps a session without the password; each
//     client does it about once a token lifetime (15 minutes by default):
//     10 a second serves 9,000 active clients.
//   - Sign-up hashes the password and writes the user in a transaction;
//     people sign up a few a minute: 2 a second (7,200 an hour) leaves room
//     and bounds how many accounts a script makes.
var costlyRoutes = []costlyRoute{
	{key: "POST /login", name: "login", limit: throttle{rate: 10, burst: 20}, perIP: 100},
	{key: "POST /tokens", name: "tokens", limit: throttle{rate: 10, burst: 20}, perIP: 100},
	{key: "POST /users", name: "sign-up", limit: throttle{rate: 2, burst: 5}, perIP: 20},
}

// paths returns every resource of API Gateway's the route is served on (a
// versioned route without a prefix, and under /api/{version}, whose one
// method, and throttle, serves every version), in table order.
func (c costlyRoute) paths() []string {
	var out []string
	for _, r := range routes.All() {
		if g, _ := routes.Gateway(r.Path); r.Resource().Key() == c.key && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// method returns the route's HTTP method.
func (c costlyRoute) method() string {
	m, _, _ := strings.Cut(c.key, " ")
	return m
}

// methodThrottles returns the stage's method settings for the costly
// routes, keyed "/login/POST" as StageOptions.MethodOptions takes them.
// A method's own limit replaces the stage's default, so it never goes past
// that default: lowering the stage's limit lowers these too.
func methodThrottles(stage throttle) map[string]*awsapigateway.MethodDeploymentOptions {
	out := map[string]*awsapigateway.MethodDeploymentOptions{}
	for _, c := range costlyRoutes {
		for _, p := range c.paths() {
			out[p+"/"+c.method()] = &awsapigateway.MethodDeploymentOptions{
				ThrottlingRateLimit:  jsii.Number(min(c.limit.rate, stage.rate)),
				ThrottlingBurstLimit: jsii.Number(min(c.limit.burst, stage.burst)),
			}
		}
	}
	return out
}

// wafWindow is the window, in seconds, over which WAF counts each address's
// requests; an address over the limit is blocked until its count over the
// last window falls below it, which is what Retry-After tells it.
const wafWindow = 300

// The keys of the problem bodies of WAF's 429s: past a per-address limit,
// and past the per-token one.
const (
	wafThrottledBody      = "throttled"
	wafTokenThrottledBody = "throttled-token"
)

// commonRuleSet is AWS's managed baseline rule group, and bodyTooLarge its
// rule that blocks bodies over 8 KB.
const (
	commonRuleSet = "AWSManagedRulesCommonRuleSet"
	bodyTooLarge  = "SizeRestrictions_BODY"
)

// newWebACL defines the web ACL on the API's stage: a per-address
// rate-based rule for each costly route the table has, and one that lets
// each bearer token send perToken requests in wafWindow, all answered with
// 429 problem+json and Retry-After; then AWS's common rule set. It costs $5
// a month, $1 a month per rule, and $0.60 per million requests.
func newWebACL(stack awscdk.Stack, api awsapigateway.RestApi, perToken int) awswafv2.CfnWebACL {
	var rules []any
	for _, c := range costlyRoutes {
		if paths := c.paths(); len(paths) > 0 {
			rules = append(rules, rateRule(c, paths, len(rules)))
		}
	}
	rules = append(rules, tokenRule(perToken, len(rules)))
	rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
		Name:     jsii.String("common-rule-set"),
		Priority: jsii.Number(len(rules)),
		// None keeps the group's own actions but for the one overridden.
		OverrideAction: &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
		Statement: &awswafv2.CfnWebACL_StatementProperty{
			ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
				VendorName: jsii.String("AWS"),
				Name:       jsii.String(commonRuleSet),
				// The rule blocks bodies over 8 KB; Quire takes JSON bodies
				// up to 64 KiB and the configuration document up to 2 MiB
				// (PUT /admin/config), bounds its functions enforce with a
				// 413 problem. Counting, rather than excluding, keeps the
				// rule's matches in the metrics.
				RuleActionOverrides: []any{&awswafv2.CfnWebACL_RuleActionOverrideProperty{
					Name:        jsii.String(bodyTooLarge),
					ActionToUse: &awswafv2.CfnWebACL_RuleActionProperty{Count: map[string]any{}},
				}},
			},
		},
		VisibilityConfig: visibility("QuireCommonRuleSet"),
	})
	acl := awswafv2.NewCfnWebACL(stack, jsii.String("WebAcl"), &awswafv2.CfnWebACLProps{
		Description: jsii.String("Quire: per-address limits on login, token refresh and sign-up, a per-token limit, " +
			"and the AWS common rule set"),
		Scope:         jsii.String("REGIONAL"),
		DefaultAction: &awswafv2.CfnWebACL_DefaultActionProperty{Allow: map[string]any{}},
		CustomResponseBodies: map[string]any{
			wafThrottledBody:      throttledBody("Too many requests from this address to this route: retry after the seconds Retry-After says."),
			wafTokenThrottledBody: throttledBody("Too many requests with this bearer token: retry after the seconds Retry-After says."),
		},
		Rules:            rules,
		VisibilityConfig: visibility("Quire"),
	})
	awswafv2.NewCfnWebACLAssociation(stack, jsii.String("WebAclAssociation"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: api.DeploymentStage().StageArn(),
		WebAclArn:   acl.AttrArn(),
	})
	return acl
}

// throttledBody is a WAF response body of the problem of type throttled
// with detail. WAF sets the Content-Type of its bodies itself, and has no
// application/problem+json.
func throttledBody(detail string) *awswafv2.CfnWebACL_CustomResponseBodyProperty {
	problem, err := json.Marshal(rest.NewProblem(quire.ETHROTTLED, detail))
	if err != nil {
		panic(err)
	}
	return &awswafv2.CfnWebACL_CustomResponseBodyProperty{
		ContentType: jsii.String("APPLICATION_JSON"),
		Content:     jsii.String(string(problem)),
	}
}

// throttled is the action of a rate-based rule: block with 429, the
// problem body of key body, and Retry-After: wafWindow.
func throttled(body string) *awswafv2.CfnWebACL_RuleActionProperty {
	return &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{
		CustomResponse: &awswafv2.CfnWebACL_CustomResponseProperty{
			ResponseCode:          jsii.Number(429),
			CustomResponseBodyKey: jsii.String(body),
			ResponseHeaders: []any{
				&awswafv2.CfnWebACL_CustomHTTPHeaderProperty{Name: jsii.String("Retry-After"), Value: jsii.String(strconv.Itoa(wafWindow))},
				&awswafv2.CfnWebACL_CustomHTTPHeaderProperty{Name: jsii.String("Cache-Control"), Value: jsii.String("no-store")},
				&awswafv2.CfnWebACL_CustomHTTPHeaderProperty{Name: jsii.String("X-Content-Type-Options"), Value: jsii.String("nosniff")},
			},
		},
	}}
}

// tokenRule is the rule that blocks a bearer token sent with more than
// limit requests in wafWindow, on whatever routes. WAF counts each value
// of the Authorization header apart, lower-cased: the authorizer takes the
// scheme in any case ("bearer", "BEARER"), which would otherwise give one
// token 64 counts. A request without the header is in no count (WAF leaves
// out a request that lacks a custom key): the scope-down says so, and on a
// protected route API Gateway answers it 401 without the authorizer.
func tokenRule(limit, priority int) *awswafv2.CfnWebACL_RuleProperty {
	const header = "authorization" // WAF matches a header's name in any case
	return &awswafv2.CfnWebACL_RuleProperty{
		Name:     jsii.String("per-token"),
		Priority: jsii.Number(priority),
		Action:   throttled(wafTokenThrottledBody),
		Statement: &awswafv2.CfnWebACL_StatementProperty{
			RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
				Limit:               jsii.Number(limit),
				EvaluationWindowSec: jsii.Number(wafWindow),
				AggregateKeyType:    jsii.String("CUSTOM_KEYS"),
				CustomKeys: []any{&awswafv2.CfnWebACL_RateBasedStatementCustomKeyProperty{
					Header: &awswafv2.CfnWebACL_RateLimitHeaderProperty{
						Name:                jsii.String(header),
						TextTransformations: transformations("LOWERCASE"),
					},
				}},
				ScopeDownStatement: &awswafv2.CfnWebACL_StatementProperty{
					SizeConstraintStatement: &awswafv2.CfnWebACL_SizeConstraintStatementProperty{
						FieldToMatch:        &awswafv2.CfnWebACL_FieldToMatchProperty{SingleHeader: map[string]any{"Name": header}},
						ComparisonOperator:  jsii.String("GT"),
						Size:                jsii.Number(0),
						TextTransformations: transformations("NONE"),
					},
				},
			},
		},
		VisibilityConfig: visibility("QuirePerToken"),
	}
}

// rateRule is the rule that blocks an address sending more than c.perIP
// requests to the costly route c in wafWindow.
func rateRule(c costlyRoute, paths []string, priority int) *awswafv2.CfnWebACL_RuleProperty {
	return &awswafv2.CfnWebACL_RuleProperty{
		Name:     jsii.String(c.name + "-per-ip"),
		Priority: jsii.Number(priority),
		Action:   throttled(wafThrottledBody),
		Statement: &awswafv2.CfnWebACL_StatementProperty{
			RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
				Limit:               jsii.Number(c.perIP),
				EvaluationWindowSec: jsii.Number(wafWindow),
				AggregateKeyType:    jsii.String("IP"),
				ScopeDownStatement: &awswafv2.CfnWebACL_StatementProperty{
					AndStatement: &awswafv2.CfnWebACL_AndStatementProperty{Statements: []any{
						&awswafv2.CfnWebACL_StatementProperty{
							ByteMatchStatement: &awswafv2.CfnWebACL_ByteMatchStatementProperty{
								FieldToMatch:         &awswafv2.CfnWebACL_FieldToMatchProperty{Method: map[string]any{}},
								PositionalConstraint: jsii.String("EXACTLY"),
								SearchString:         jsii.String(c.method()),
								TextTransformations:  transformations("NONE"),
							},
						},
						&awswafv2.CfnWebACL_StatementProperty{
							RegexMatchStatement: &awswafv2.CfnWebACL_RegexMatchStatementProperty{
								FieldToMatch: &awswafv2.CfnWebACL_FieldToMatchProperty{UriPath: map[string]any{}},
								RegexString:  jsii.String(pathPattern(paths)),
								// A path spelled %6Cogin or //login reaches the
								// same method; match it as that method's path.
								TextTransformations: transformations("URL_DECODE", "NORMALIZE_PATH"),
							},
						},
					}},
				},
			},
		},
		VisibilityConfig: visibility("Quire" + exportName(c.name) + "PerIp"),
	}
}

// pathPattern returns the regular expression of a request path on any of
// paths. WAF sees the path as the client sent it: on the execute-api URL it
// starts with the stage's name (/prod/login), on a custom domain with its
// base path, if any; so one first segment is optional, and so is a trailing
// slash. A path parameter matches one segment.
func pathPattern(paths []string) string {
	param := regexp.MustCompile(`\\\{[^/]*?\\\}`)
	alts := make([]string, len(paths))
	for i, p := range paths {
		alts[i] = param.ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)
	}
	return "^(/[^/]+)?(" + strings.Join(alts, "|") + ")/?$"
}

func transformations(types ...string) []any {
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = &awswafv2.CfnWebACL_TextTransformationProperty{Priority: jsii.Number(i), Type: jsii.String(t)}
	}
	return out
}

func visibility(metric string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
	return &awswafv2.CfnWebACL_VisibilityConfigProperty{
		CloudWatchMetricsEnabled: jsii.Bool(true),
		SampledRequestsEnabled:   jsii.Bool(true),
		MetricName:               jsii.String(metric),
	}
}
