package pretraffic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/pretraffic"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// functions are the invokes of every checked function, built as the local
// server builds them, on fresh tables (with the demo data when withDemo).
func functions(t *testing.T, withDemo bool) (map[string]pretraffic.Invoke, *dynamodb.Client, dynamo.TableNames) {
	t.Helper()
	cfg, db, tables := servicetest.Config(t)
	if withDemo {
		if _, err := demo.Load(t.Context(), db, tables, demo.DefaultOptions()); err != nil {
			t.Fatal(err)
		}
	}
	fns, err := api.Handlers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := api.Authorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pretraffic.Invoke{pretraffic.Authorizer: pretraffic.Handler(a.Handle)}
	for g, h := range fns {
		out[g] = pretraffic.Handler(h)
	}
	return out, db, tables
}

// Every function the stack deploys has checks, and a working version
// passes them, on a fresh stage with no data as on one with data, and
// they change nothing stored.
func TestChecksPassAndWriteNothing(t *testing.T) {
	var want []string
	for _, g := range routes.Groups() {
		want = append(want, g.Name)
	}
	if got := pretraffic.Groups(); !slices.Equal(got, append([]string{pretraffic.Authorizer}, want...)) {
		t.Errorf("Groups() = %v, want the authorizer and %v", got, want)
	}
	for _, withDemo := range []bool{false, true} {
		fns, db, tables := functions(t, withDemo)
		before := dynamotest.Snapshot(t, db, tables)
		for _, g := range pretraffic.Groups() {
			if err := pretraffic.Check(t.Context(), g, fns[g]); err != nil {
				t.Errorf("demo data %v: %s: %v", withDemo, g, err)
			}
		}
		if after := dynamotest.Snapshot(t, db, tables); !slices.Equal(before, after) {
			t.Errorf("demo data %v: the checks changed what is stored:\nbefore %v\nafter  %v", withDemo, before, after)
		}
	}
}

// answering changes what a proxy function answers.
func answering(inv pretraffic.Invoke, change func(*events.APIGatewayProxyRequest, *events.APIGatewayProxyResponse)) pretraffic.Invoke {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		out, err := inv(ctx, payload)
		if err != nil {
			return nil, err
		}
		var resp events.APIGatewayProxyResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			return nil, err
		}
		change(&ev, &resp)
		return json.Marshal(resp)
	}
}

// A version that answers wrongly fails its checks, with the request and
// what was wrong.
func TestChecksFailABrokenVersion(t *testing.T) {
	fns, _, _ := functions(t, true)
	for _, tc := range []struct {
		name, group string
		invoke      pretraffic.Invoke
		want        string
	}{
		{"its table is unreachable", routes.GroupHealth, answering(fns[routes.GroupHealth], func(_ *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) {
			r.StatusCode = 503
		}), "GET /health: status 503, want 200"},
		{"it fails", routes.GroupUsers, func(context.Context, []byte) ([]byte, error) {
			return nil, errors.New("runtime error: invalid memory address or nil pointer dereference")
		}, "GET /users/4095: the function failed: runtime error"},
		{"no problem body", routes.GroupUsers, answering(fns[routes.GroupUsers], func(_ *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) {
			r.Body = "not found"
		}), "GET /users/4095: not a problem of type"},
		{"sniffable", routes.GroupCatalog, answering(fns[routes.GroupCatalog], func(_ *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) {
			delete(r.MultiValueHeaders, "X-Content-Type-Options")
		}), "GET /landing: X-Content-Type-Options"},
		{"not JSON", routes.GroupOrders, answering(fns[routes.GroupOrders], func(_ *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) {
			r.MultiValueHeaders["Content-Type"] = []string{"text/html"}
		}), "GET /orders: Content-Type"},
		{"no revalidation", routes.GroupCatalog, answering(fns[routes.GroupCatalog], func(ev *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) {
			if r.StatusCode == 304 { // as if If-None-Match were ignored
				r.StatusCode, r.Body = 200, "{}"
				r.MultiValueHeaders["Content-Type"] = []string{"application/json"}
			}
		}), "GET /landing: status 200, want 304"},
		{"an authorizer that lets anyone in", pretraffic.Authorizer, pretraffic.Handler(func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
			return events.APIGatewayCustomAuthorizerResponse{PrincipalID: "anyone"}, nil
		}), `authorizer, Authorization "": answered {"principalId":"anyone"`},
	} {
		err := pretraffic.Check(t.Context(), tc.group, tc.invoke)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if err := pretraffic.Check(t.Context(), "payments", fns[routes.GroupOrders]); err == nil {
		t.Error("a group without checks passed")
	}
}

// codeDeploy is CodeDeploy as the hook sees it: deployments by id, and the
// statuses reported.
type codeDeploy struct {
	groups   map[string]string // deployment id → deployment group
	getErr   error
	putErr   error
	reported []string // "<deployment> <execution> <status>"
}

func (c *codeDeploy) GetDeployment(_ context.Context, in *codedeploy.GetDeploymentInput, _ ...func(*codedeploy.Options)) (*codedeploy.GetDeploymentOutput, error) {
	if c.getErr != nil {
		return nil, c.getErr
	}
	g, ok := c.groups[*in.DeploymentId]
	if !ok {
		return nil, errors.New("DeploymentDoesNotExistException")
	}
	return &codedeploy.GetDeploymentOutput{DeploymentInfo: &cdtypes.DeploymentInfo{DeploymentId: in.DeploymentId, DeploymentGroupName: &g}}, nil
}

func (c *codeDeploy) PutLifecycleEventHookExecutionStatus(_ context.Context, in *codedeploy.PutLifecycleEventHookExecutionStatusInput, _ ...func(*codedeploy.Options)) (*codedeploy.PutLifecycleEventHookExecutionStatusOutput, error) {
	if c.putErr != nil {
		return nil, c.putErr
	}
	c.reported = append(c.reported, *in.DeploymentId+" "+*in.LifecycleEventHookExecutionId+" "+string(in.Status))
	return &codedeploy.PutLifecycleEventHookExecutionStatusOutput{}, nil
}

// lambdaService invokes functions by ARN, as Lambda does: a function's
// error is a FunctionError with its message in the payload.
type lambdaService struct {
	fns     map[string]pretraffic.Invoke
	denials int // calls refused first, as while IAM applies a new policy
	invoked []string
}

func (l *lambdaService) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	l.invoked = append(l.invoked, *in.FunctionName)
	if l.denials > 0 {
		l.denials--
		return nil, &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform lambda:InvokeFunction"}
	}
	fn, ok := l.fns[*in.FunctionName]
	if !ok {
		return nil, errors.New("AccessDeniedException: not authorized to perform lambda:InvokeFunction")
	}
	out, err := fn(ctx, in.Payload)
	if err != nil {
		payload, _ := json.Marshal(map[string]string{"errorMessage": err.Error(), "errorType": "errorString"})
		return &lambda.InvokeOutput{StatusCode: 200, FunctionError: new("Unhandled"), Payload: payload}, nil
	}
	return &lambda.InvokeOutput{StatusCode: 200, Payload: out}, nil
}

// The hook checks the new version of the deployment's group, and no other
// version, and reports the outcome; whatever goes wrong before the report
// is a failure it reports, never a deployment left waiting.
func TestHook(t *testing.T) {
	fns, _, _ := functions(t, false)
	const (
		users   = "arn:aws:lambda:eu-west-1:123456789012:function:Quire-dev-UsersFunction:7"
		auth    = "arn:aws:lambda:eu-west-1:123456789012:function:Quire-dev-AuthorizerFunction:4"
		catalog = "arn:aws:lambda:eu-west-1:123456789012:function:Quire-dev-CatalogFunction:9"
	)
	versions := map[string]string{routes.GroupUsers: users, pretraffic.Authorizer: auth, routes.GroupCatalog: catalog}
	broken := answering(fns[routes.GroupCatalog], func(_ *events.APIGatewayProxyRequest, r *events.APIGatewayProxyResponse) { r.StatusCode = 500 })
	for _, tc := range []struct {
		name, group  string
		getErr       error
		denials      int
		want         string // the status reported
		wantInvoked  string // the version invoked, if any
		callsAtLeast int
	}{
		{"a working version", routes.GroupUsers, nil, 0, "Succeeded", users, 1},
		{"the authorizer", pretraffic.Authorizer, nil, 0, "Succeeded", auth, 2},
		{"a broken version", routes.GroupCatalog, nil, 0, "Failed", catalog, 1},
		{"a group the hook has no version of", routes.GroupCarts, nil, 0, "Failed", "", 0},
		{"CodeDeploy does not answer", routes.GroupUsers, errors.New("ThrottlingException"), 0, "Failed", "", 0},
		{"IAM applies the new policy late", routes.GroupUsers, nil, 1, "Succeeded", users, 2},
	} {
		cd := &codeDeploy{groups: map[string]string{"d-ABC123": tc.group}, getErr: tc.getErr}
		l := &lambdaService{fns: map[string]pretraffic.Invoke{users: fns[routes.GroupUsers], auth: fns[pretraffic.Authorizer], catalog: broken}, denials: tc.denials}
		h := &pretraffic.Hook{CodeDeploy: cd, Lambda: l, Versions: versions}
		if err := h.Handle(t.Context(), pretraffic.Event{DeploymentID: "d-ABC123", LifecycleEventHookExecutionID: "exec-1"}); err != nil {
			t.Errorf("%s: Handle: %v", tc.name, err)
		}
		if want := []string{"d-ABC123 exec-1 " + tc.want}; !slices.Equal(cd.reported, want) {
			t.Errorf("%s: reported %v, want %v", tc.name, cd.reported, want)
		}
		if len(l.invoked) < tc.callsAtLeast {
			t.Errorf("%s: %d invocations, want at least %d", tc.name, len(l.invoked), tc.callsAtLeast)
		}
		for _, v := range l.invoked {
			if v != tc.wantInvoked {
				t.Errorf("%s: invoked %s, want only %q", tc.name, v, tc.wantInvoked)
			}
		}
	}

	// CodeDeploy's own event, as events/ keeps it.
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "hook", "before-allow-traffic.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev pretraffic.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	cd := &codeDeploy{groups: map[string]string{ev.DeploymentID: routes.GroupUsers}}
	h := &pretraffic.Hook{CodeDeploy: cd, Lambda: &lambdaService{fns: map[string]pretraffic.Invoke{users: fns[routes.GroupUsers]}}, Versions: versions}
	if err := h.Handle(t.Context(), ev); err != nil || !slices.Equal(cd.reported, []string{ev.DeploymentID + " " + ev.LifecycleEventHookExecutionID + " Succeeded"}) {
		t.Errorf("CodeDeploy's event: Handle = %v, reported %v", err, cd.reported)
	}

	// Checks that outlast the hook's time fail, and are reported so
	// before Lambda would stop the hook.
	cd = &codeDeploy{groups: map[string]string{"d-2": routes.GroupUsers}}
	hang := func(ctx context.Context, _ []byte) ([]byte, error) { <-ctx.Done(); return nil, ctx.Err() }
	h = &pretraffic.Hook{CodeDeploy: cd, Lambda: &lambdaService{fns: map[string]pretraffic.Invoke{users: hang}}, Versions: versions}
	ctx, cancel := context.WithTimeout(t.Context(), pretraffic.ReportMargin+200*time.Millisecond)
	defer cancel()
	if err := h.Handle(ctx, pretraffic.Event{DeploymentID: "d-2", LifecycleEventHookExecutionID: "e"}); err != nil || !slices.Equal(cd.reported, []string{"d-2 e Failed"}) {
		t.Errorf("checks past the deadline: Handle = %v, reported %v", err, cd.reported)
	}

	// A report CodeDeploy does not take is the hook's error: Lambda runs
	// it again.
	cd = &codeDeploy{groups: map[string]string{"d-1": routes.GroupUsers}, putErr: errors.New("ThrottlingException")}
	h = &pretraffic.Hook{CodeDeploy: cd, Lambda: &lambdaService{fns: map[string]pretraffic.Invoke{users: fns[routes.GroupUsers]}}, Versions: versions}
	if err := h.Handle(t.Context(), pretraffic.Event{DeploymentID: "d-1", LifecycleEventHookExecutionID: "e"}); err == nil {
		t.Error("a failed report: Handle returned nil")
	}
}

// The hook's environment: its credentials, and the versions as JSON.
func TestHookFromEnv(t *testing.T) {
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "eu-west-1",
		pretraffic.VersionsEnv: `{"users":"arn:aws:lambda:eu-west-1:123456789012:function:f:1"}`}
	h, err := pretraffic.HookFromEnv(func(k string) string { return env[k] })
	if err != nil || h.Versions[routes.GroupUsers] == "" || h.CodeDeploy == nil || h.Lambda == nil {
		t.Fatalf("HookFromEnv = %+v, %v", h, err)
	}
	for _, bad := range []string{"", "{}", "[1]", `{"users":`} {
		env[pretraffic.VersionsEnv] = bad
		if _, err := pretraffic.HookFromEnv(func(k string) string { return env[k] }); err == nil {
			t.Errorf("%s %q: no error", pretraffic.VersionsEnv, bad)
		}
	}
}

// The hook's SDK clients against CodeDeploy's and Lambda's wire protocols,
// served here: a check reaches the new version by its ARN with the event as
// the payload, a function's error comes back as X-Amz-Function-Error, and
// the report names the deployment, its execution and the outcome.
func TestHookOnTheWire(t *testing.T) {
	fns, _, _ := functions(t, false)
	const users = "arn:aws:lambda:us-east-1:123456789012:function:Quire-UsersFunction:7"
	const auth = "arn:aws:lambda:us-east-1:123456789012:function:Quire-AuthorizerFunction:3"
	byARN := map[string]pretraffic.Invoke{users: fns[routes.GroupUsers], auth: fns[pretraffic.Authorizer]}
	groups := map[string]string{"d-USERS": routes.GroupUsers, "d-AUTH": pretraffic.Authorizer}
	var invoked, reported []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if fn, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/"); ok && r.Method == "POST" {
			fn = strings.TrimSuffix(fn, "/invocations")
			invoked = append(invoked, fn)
			out, err := byARN[fn](r.Context(), body)
			if err != nil {
				w.Header().Set("X-Amz-Function-Error", "Unhandled")
				out, _ = json.Marshal(map[string]string{"errorMessage": err.Error(), "errorType": "errorString"})
			}
			w.Write(out)
			return
		}
		var in struct {
			DeploymentID string `json:"deploymentId"`
			Execution    string `json:"lifecycleEventHookExecutionId"`
			Status       string `json:"status"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "CodeDeploy_20141006.GetDeployment":
			fmt.Fprintf(w, `{"deploymentInfo":{"deploymentId":%q,"deploymentGroupName":%q,"status":"InProgress"}}`, in.DeploymentID, groups[in.DeploymentID])
		case "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus":
			reported = append(reported, in.DeploymentID+" "+in.Execution+" "+in.Status)
			fmt.Fprintf(w, `{"lifecycleEventHookExecutionId":%q}`, in.Execution)
		default:
			http.Error(w, "unknown operation "+r.Header.Get("X-Amz-Target"), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	env := awsenv.FromEnv(func(string) string { return "" })
	h := &pretraffic.Hook{
		CodeDeploy: codedeploy.New(codedeploy.Options{Region: env.Region, Credentials: env.Credentials(), BaseEndpoint: &srv.URL}),
		Lambda:     lambda.New(lambda.Options{Region: env.Region, Credentials: env.Credentials(), BaseEndpoint: &srv.URL}),
		Versions:   map[string]string{routes.GroupUsers: users, pretraffic.Authorizer: auth},
	}
	for _, id := range []string{"d-USERS", "d-AUTH"} {
		if err := h.Handle(t.Context(), pretraffic.Event{DeploymentID: id, LifecycleEventHookExecutionID: "exec-" + id}); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if want := []string{"d-USERS exec-d-USERS Succeeded", "d-AUTH exec-d-AUTH Succeeded"}; !slices.Equal(reported, want) {
		t.Errorf("reported %v, want %v", reported, want)
	}
	if want := []string{users, auth, auth}; !slices.Equal(invoked, want) {
		t.Errorf("invoked %v, want %v", invoked, want)
	}
}

// TestActions: pretraffic.Actions names the IAM action of every method of
// the CodeDeploy and Lambda interfaces, the only calls the hook can make,
// and nothing else: its role is checked against them (infra).
func TestActions(t *testing.T) {
	var methods []string
	for _, iface := range []reflect.Type{reflect.TypeFor[pretraffic.CodeDeploy](), reflect.TypeFor[pretraffic.Lambda]()} {
		for m := range iface.Methods() {
			methods = append(methods, m.Name)
		}
	}
	slices.Sort(methods)
	if named := slices.Sorted(maps.Keys(pretraffic.Actions)); !slices.Equal(methods, named) {
		t.Errorf("the hook's calls %v, pretraffic.Actions names %v", methods, named)
	}
}
