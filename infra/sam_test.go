package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// samTemplate is the template `make synth` writes, of the stack infra's main
// defines.
const samTemplate = "cdk.out/Quire.template.json"

// samDefaults are the variables the SAM CLI gives every function besides
// those its template declares, when the machine has no AWS credentials.
var samDefaults = map[string]string{
	"AWS_SAM_LOCAL": "true", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
	"AWS_ACCESS_KEY_ID": "defaultkey", "AWS_SECRET_ACCESS_KEY": "defaultsecret",
}

// samEnv is the environment the SAM CLI gives the function with logical id
// fn of the template's resources, with the --env-vars file overrides (nil
// for none): each variable the template declares, its value from the file
// when the file's Parameters name it, else a string as it is, a Ref as the
// logical id it points at, any other intrinsic function as "" (see the SAM
// CLI's samcli/local/lambdafn/env_vars.py). It has none of the variables
// the template does not declare.
func samEnv(t *testing.T, res map[string]resource, fn string, overrides []byte) map[string]string {
	t.Helper()
	r, ok := res[fn]
	if !ok || r.Type != "AWS::Lambda::Function" {
		t.Fatalf("the template has no function %s", fn)
	}
	var file struct{ Parameters map[string]string }
	if overrides != nil {
		if err := json.Unmarshal(overrides, &file); err != nil {
			t.Fatalf("the --env-vars file: %v", err)
		}
	}
	env := map[string]string{}
	for k, v := range samDefaults {
		env[k] = v
	}
	declared, _ := r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	for name, v := range declared {
		switch v := v.(type) {
		case string:
			env[name] = v
		case map[string]any:
			if id, ok := v["Ref"].(string); ok {
				env[name] = id
			} else {
				env[name] = ""
			}
		default:
			env[name] = fmt.Sprint(v)
		}
		if o, ok := file.Parameters[name]; ok {
			env[name] = o
		}
	}
	return env
}

// makeRun is the configuration `make run` serves with when nothing is set,
// on DynamoDB at endpoint, with its development signing keys.
func makeRun(t *testing.T, endpoint string) service.Config {
	t.Helper()
	c, err := service.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	key, err := auth.GenerateKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.KeySet{Keys: []auth.Key{key}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	c.DynamoDB.Endpoint, c.SigningKeys = endpoint, string(keys)
	return c
}

// With the --env-vars file `make run` writes, every function that reads
// DynamoDB gets the endpoint the container reaches `make run`'s DynamoDB
// Local at and the tables `make run` creates; without it, it gets none and
// the tables' logical ids, as the SAM CLI gives them.
func TestSAMEnvironment(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	run := makeRun(t, "http://127.0.0.1:41999")
	file, err := api.SAMEnv(run)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, g := range routes.Groups() {
		if len(g.Grants) == 0 {
			continue
		}
		fn := exportName(g.Name) + "Function"
		c, err := service.ConfigFromEnv(mapEnv(samEnv(t, res, fn, file)))
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if c.DynamoDB.Endpoint != "http://127.0.0.1:41999" {
			t.Errorf("%s: DynamoDB at %q", fn, c.DynamoDB.Endpoint)
		}
		for _, gr := range g.Grants {
			if got, want := c.DynamoDB.Tables.Physical(gr.Table), run.DynamoDB.Tables.Physical(gr.Table); got != want {
				t.Errorf("%s: table %s is %q, want %q as make run creates it", fn, gr.Table, got, want)
			}
		}
		// What the SAM CLI gives without the file: no endpoint, and the
		// tables' logical ids.
		bare, err := service.ConfigFromEnv(mapEnv(samEnv(t, res, fn, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if bare.DynamoDB.Endpoint != "" || !strings.HasPrefix(bare.DynamoDB.Tables.Physical(g.Grants[0].Table), exportName(g.Grants[0].Table)+"Table") {
			t.Errorf("%s without the file: DynamoDB at %q, table %q", fn, bare.DynamoDB.Endpoint, bare.DynamoDB.Tables.Physical(g.Grants[0].Table))
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no function reads DynamoDB")
	}
	auth := samEnv(t, res, exportName(routes.GroupAuth)+"Function", file)
	if auth["SIGNING_KEYS"] != run.SigningKeys {
		t.Errorf("the auth function's SIGNING_KEYS are not make run's")
	}
}

func mapEnv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// TestSAMRecipe replays the commands of docs/testing.md's `sam local
// invoke` recipe as the SAM CLI would run them, with `make run`'s DynamoDB
// Local (its tables and demo data) and the --env-vars file it writes: each
// function of the template, with the environment the SAM CLI gives it,
// answers its event with the outcome in events/<group>/expected.json. The
// container reaches DynamoDB Local, which listens on 127.0.0.1 only, when
// it shares the machine's network: --docker-network host.
func TestSAMRecipe(t *testing.T) {
	needsNode(t)
	endpoint := dynamotest.Endpoint(t)
	_, res := template(t)
	run := makeRun(t, endpoint)
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.CreateTables(t.Context(), db, run.DynamoDB.Tables); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Load(t.Context(), db, run.DynamoDB.Tables, demo.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	envFile, err := api.SAMEnv(run)
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeRecipe(t)
	vars := map[string]string{}    // shell variables
	written := map[string][]byte{} // files the recipe writes
	source := map[string]string{}  // the event file each was written from
	invoked := 0
	for _, cmd := range commands {
		if cmd == "make synth" {
			continue // the template: synthesized in process
		}
		if m := sedLine.FindStringSubmatch(cmd); m != nil {
			in, err := os.ReadFile(filepath.Join("..", m[3]))
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			written[m[4]], source[m[4]] = []byte(strings.ReplaceAll(string(in), m[1], vars[m[2]])), m[3]
			continue
		}
		m := samLine.FindStringSubmatch(cmd)
		if m == nil {
			t.Fatalf("docs/testing.md's recipe has a command this test cannot replay: %s", cmd)
		}
		variable, args, pipe := m[1], strings.Fields(m[2]), m[3]
		inv := parseInvoke(t, args)
		if inv.template != samTemplate || inv.envVars != api.SAMEnvFile {
			t.Errorf("%s: want -t %s and --env-vars %s", cmd, samTemplate, api.SAMEnvFile)
		}
		env := samEnv(t, res, inv.function, envFile)
		if u, err := url.Parse(env["DYNAMODB_ENDPOINT"]); err == nil && u.Host != "" && inv.network != "host" {
			t.Errorf("%s: reads DynamoDB at %s, which the container reaches only with --docker-network host", cmd, u.Host)
		}
		event, from := written[inv.event], source[inv.event]
		if from == "" {
			from = inv.event
			if event, err = os.ReadFile(filepath.Join("..", inv.event)); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
		out := invokeAsSAM(t, inv.function, env, event)
		if got, want := out.outcome, expectedOutcome(t, from); got != want {
			t.Errorf("%s: %s, want %s", cmd, got, want)
		}
		switch pipe {
		case "":
		case " | jq -r .body | jq -r .access_token":
			var body struct {
				AccessToken string `json:"access_token"`
			}
			if err := json.Unmarshal([]byte(out.body), &body); err != nil || body.AccessToken == "" {
				t.Fatalf("%s: no access_token in %s", cmd, out.body)
			}
			vars[variable] = body.AccessToken
		default:
			t.Fatalf("docs/testing.md's recipe pipes into what this test cannot replay: %s", pipe)
		}
		invoked++
	}
	if invoked < 2 {
		t.Fatalf("docs/testing.md's recipe invokes %d functions", invoked)
	}
}

// The shapes of the recipe's commands: `sed "s/NAME/$VAR/" in > out`, and
// `[VAR=$(]sam local invoke ...[ | pipe][)]`.
var (
	sedLine = regexp.MustCompile(`^sed "s/(\w+)/\$(\w+)/" (\S+) > (\S+)$`)
	samLine = regexp.MustCompile(`^(?:(\w+)=\$\()?sam local invoke ([^|)]+?)((?: \| [^)]+)?)\)?$`)
)

type invocation struct{ template, function, event, envVars, network string }

func parseInvoke(t *testing.T, args []string) invocation {
	t.Helper()
	var inv invocation
	for i := 0; i < len(args); i++ {
		flag := map[string]*string{"-t": &inv.template, "-e": &inv.event, "--env-vars": &inv.envVars, "--docker-network": &inv.network}
		if p, ok := flag[args[i]]; ok && i+1 < len(args) {
			*p = args[i+1]
			i++
			continue
		}
		if strings.HasPrefix(args[i], "-") || inv.function != "" {
			t.Fatalf("sam local invoke: an argument this test does not know: %s", args[i])
		}
		inv.function = args[i]
	}
	return inv
}

// readmeRecipe returns the commands of docs/testing.md's code block that
// follows the comment naming this test, with continued lines joined.
func readmeRecipe(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "<!-- infra/sam_test.go replays the commands of the next block")
	if !ok {
		t.Fatal("docs/testing.md has no recipe for this test to replay")
	}
	_, block, _ := strings.Cut(after, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", ""), "\n") {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// result is what a function answered: for a group's function its status
// and body, for the authorizer Allow, Deny or its error.
type result struct{ outcome, body string }

// invokeAsSAM builds the function with logical id fn from env, as its main
// does, and invokes it with event.
func invokeAsSAM(t *testing.T, fn string, env map[string]string, event []byte) result {
	t.Helper()
	c, err := service.ConfigFromEnv(mapEnv(env))
	if err != nil {
		t.Fatalf("%s: its environment: %v", fn, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), apigw.FunctionTimeout)
	defer cancel()
	if fn == exportName(authorizerName)+"Function" {
		a, err := api.Authorizer(c)
		if err != nil {
			t.Fatalf("%s: init: %v", fn, err)
		}
		var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
		if err := json.Unmarshal(event, &ev); err != nil {
			t.Fatal(err)
		}
		resp, err := a.Handle(ctx, ev)
		switch {
		case err != nil:
			return result{outcome: err.Error()}
		case apigw.PolicyAllows(resp.PolicyDocument, ev.MethodArn):
			return result{outcome: "Allow"}
		}
		return result{outcome: "Deny"}
	}
	for _, g := range routes.Groups() {
		if exportName(g.Name)+"Function" != fn {
			continue
		}
		h, err := api.Handler(c, g.Name)
		if err != nil {
			t.Fatalf("%s: init: %v", fn, err)
		}
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(event, &ev); err != nil {
			t.Fatal(err)
		}
		resp, err := h(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		return result{outcome: fmt.Sprint(resp.StatusCode), body: resp.Body}
	}
	t.Fatalf("%s is no function this test can invoke", fn)
	return result{}
}

// expectedOutcome is the outcome the expected.json beside an event file
// records for it.
func expectedOutcome(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", filepath.Dir(file), "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected map[string]json.RawMessage
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	raw := expected[filepath.Base(file)]
	var status struct{ Status int }
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil:
		return s
	case json.Unmarshal(raw, &status) == nil && status.Status != 0:
		return fmt.Sprint(status.Status)
	}
	return strings.TrimSpace(string(raw))
}
