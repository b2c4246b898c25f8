// Command bench measures Quire's functions as Lambda runs them and writes
// its Markdown tables to docs/bench.md (`make bench`): each bootstrap's size, its
// init time against a minimal Lambda Runtime API served here, its cold and
// warm request against DynamoDB Local, beside a hello-world function built
// and measured in the same run as the floor; the DynamoDB requests and
// sequential round trips each route makes; the authorizer's warm cost per
// token; login's time for each outcome; the configuration document's cost
// at 2 MiB, as is, gzip-compressed and not modified; the key heat of a
// traffic mix, with the request rate at which its hottest partition
// reaches DynamoDB's limits; and the cost of a million requests of each
// route and of the mix.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quireapi/quire/cmd/bench/generated"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/pretraffic"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/ddblocal"
)

// page is the page of docs/ this command writes.
const page = "docs/bench.md"

// Targets from the foundation's definition of done.
const (
	runs = 31
	// initRuns is more rounds than runs: an init takes a few milliseconds,
	// and the spread between rounds is a tenth of the floor.
	initRuns      = 101
	maxInitRatio  = 1.3
	maxBootstrap  = 10 << 20 // 10 MiB
	floorFunction = "hello (floor)"
)

func main() {
	// The functions' lines are not what is measured here.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// function is one binary under measure, the event its cold request gets
// and the check of its answer.
type function struct {
	name, pkg  string
	event      []byte
	check      func(result) error
	size       int64
	binary     string
	init, cold []time.Duration
	warm       []time.Duration
}

func run(ctx context.Context) error {
	keys, err := devKeys()
	if err != nil {
		return err
	}
	cfg := service.Config{
		DynamoDB:    dynamo.Config{Endpoint: os.Getenv("DYNAMODB_ENDPOINT"), Tables: dynamo.PrefixedTableNames(fmt.Sprintf("bench-%d-", time.Now().Unix()))},
		Tokens:      login.TokenConfig{Issuer: login.DefaultIssuer, Audience: login.DefaultAudience, Lifetime: login.DefaultLifetime},
		SigningKeys: keys,
		// As deployed: catalog reads served from the instance's cache.
		CatalogStaleness: cache.DefaultCatalogStaleness,
	}
	tokens, err := demoTokens(cfg)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "quire-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fns := []*function{{name: floorFunction, pkg: "./cmd/bench/hello", event: event("GET", "/health", "/health", nil), check: checkOK}}
	for _, g := range routes.Groups() {
		path, params := exampleGet(g.Name)
		ev := event("GET", strings.ReplaceAll(path, "{id}", params["id"]), path, params)
		fns = append(fns, &function{name: g.Name, pkg: "./functions/" + g.Name, event: ev, check: checkOK})
	}
	authEvent, _ := json.Marshal(authorizerEvent(tokens["admin"]))
	fns = append(fns, &function{name: "authorizer", pkg: "./functions/authorizer", event: authEvent, check: authorizerOK})
	// The hook's requests go to CodeDeploy and Lambda: its init alone is
	// timed here, and its checks in hookRuns.
	fns = append(fns, &function{name: hookName, pkg: "./functions/hook"})
	// The events pipe's enrichment calls nothing: its init alone is timed.
	fns = append(fns, &function{name: "events", pkg: "./functions/events"})
	for _, f := range fns {
		if err := build(f, dir); err != nil {
			return err
		}
	}
	set, err := auth.ParseKeySet([]byte(keys))
	if err != nil {
		return err
	}
	jwks, err := set.PublicSet().MarshalJSON()
	if err != nil {
		return err
	}
	// Login has the private keys and the authorizer the public ones. As
	// deployed, login reads its keys from their secret, in the background
	// (SIGNING_KEY_SECRET); the requests here have no Secrets Manager, and
	// get them in SIGNING_KEYS. The events function takes its source from
	// the stack, as every function its variables.
	deployedEnv := []string{"JWKS=" + string(jwks), pretraffic.VersionsEnv + "=" + newVersions(),
		"EVENT_SOURCE=" + quire.EventSource(quire.Stack)}
	keyEnv := append([]string{"SIGNING_KEYS=" + keys}, deployedEnv...)

	// Inits are timed first, in rounds of their own, before DynamoDB Local
	// starts: no JVM shares the two cores with them. A function's init
	// makes no request, so each gets the environment of a deployed one,
	// with no DYNAMODB_ENDPOINT, and login the secret of its keys. Each
	// round takes the functions in a new order, so that none always
	// follows the same one.
	initEnv := append(lambdaEnv(dynamo.Config{Tables: cfg.DynamoDB.Tables}),
		append(deployedEnv, "SIGNING_KEY_SECRET=arn:aws:secretsmanager:us-east-1:123456789012:secret:quire-signing-keys")...)
	for range initRuns {
		for _, i := range rand.Perm(len(fns)) {
			r, err := measure(ctx, fns[i].binary, initEnv, nil, nil)
			if err != nil {
				return err
			}
			fns[i].init = append(fns[i].init, r.init)
		}
	}

	if cfg.DynamoDB.Endpoint == "" {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			return err
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: DynamoDB Local did not stop cleanly:", err)
			}
		}()
		cfg.DynamoDB.Endpoint = srv.Endpoint()
	}
	if err := seed(ctx, cfg.DynamoDB); err != nil {
		return err
	}
	env := append(lambdaEnv(cfg.DynamoDB), keyEnv...)
	for range runs { // interleaved, so that the machine's mood hits all alike
		for _, f := range fns {
			if f.event == nil {
				continue
			}
			r, err := measure(ctx, f.binary, env, f.event, f.check)
			if err != nil {
				return err
			}
			f.cold, f.warm = append(f.cold, r.cold), append(f.warm, r.warm)
		}
	}
	hellodb := &function{name: "hellodb (floor)", pkg: "./cmd/bench/hellodb", event: fns[0].event, check: checkOK}
	if err := build(hellodb, dir); err != nil {
		return err
	}
	deployed, deployedHow, err := coldAsDeployed(ctx, fns, hellodb, cfg.DynamoDB.Endpoint, env)
	if err != nil {
		return err
	}
	hooks, err := hookRuns(ctx, cfg)
	if err != nil {
		return err
	}
	costs, err := authorizerCosts(cfg, tokens["admin"])
	if err != nil {
		return err
	}
	logins, err := loginTimes(cfg)
	if err != nil {
		return err
	}
	rows, err := countRequests(ctx, cfg)
	if err != nil {
		return err
	}
	mix, err := weigh(rows)
	if err != nil {
		return err
	}
	var authz authorizerRun
	for _, c := range costs {
		if c.name == "Authorizer.Handle" {
			authz.millis = billedMillis(time.Duration(c.nsPerOp))
		}
	}
	authz.memoryMB = routes.AuthorizerMemoryMB
	prices, err := routeCosts(mix, authz)
	if err != nil {
		return err
	}
	cfg.DynamoDB.Tables = dynamo.PrefixedTableNames(fmt.Sprintf("bench-config-%d-", time.Now().Unix()))
	if err := seed(ctx, cfg.DynamoDB); err != nil {
		return err
	}
	docs, err := configCosts(cfg)
	if err != nil {
		return err
	}
	tel, err := telemetryCost(cfg)
	if err != nil {
		return err
	}
	return generated.Write(page, "Benchmarks", "For anyone changing what a function links, what a route reads or writes, or "+
		"what Quire costs. It gives, as measured here, each function's size and init and each route's DynamoDB requests. "+
		"It gives what login, the configuration document, a request's logs and the pre-traffic hook cost. It ends with "+
		"the cost per million requests. How it measures is in [Performance and cost](performance.md).", "make bench", func(w io.Writer) error {
		printReport(w, fns, rows, costs, logins, docs)
		printDeployed(w, deployed, deployedHow)
		for _, f := range fns {
			if f.name == routes.GroupUsers {
				printTelemetry(w, tel, median(f.warm))
			}
		}
		printHeat(w, mix)
		printCost(w, prices, authz)
		printEventsCost(w, prices)
		inits := map[string]time.Duration{}
		for _, f := range fns {
			inits[f.name] = median(f.init)
		}
		printHook(w, hooks, inits)
		return nil
	})
}

// newVersions is the hook's NEW_VERSIONS, as the stack sets it: a version
// of every function it checks.
func newVersions() string {
	v := map[string]string{}
	for _, g := range pretraffic.Groups() {
		v[g] = "arn:aws:lambda:us-east-1:123456789012:function:Quire-" + g + ":1"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func seed(ctx context.Context, cfg dynamo.Config) error {
	db, err := dynamo.NewClient(cfg)
	if err != nil {
		return err
	}
	if err := dynamo.CreateTables(ctx, db, cfg.Tables); err != nil {
		return err
	}
	_, err = demo.Load(ctx, db, cfg.Tables, demo.DefaultOptions())
	return err
}

// exampleGet returns a GET route of group to time the cold request with:
// one with an id when there is one (id 1 is a demo user), else the first.
// Its event carries the admin's authorizer context.
func exampleGet(group string) (string, map[string]string) {
	var first string
	for _, r := range routes.ForGroup(group) {
		if r.Method != "GET" {
			continue
		}
		if strings.Contains(r.Path, "{id}") {
			return r.Path, map[string]string{"id": "1"}
		}
		if first == "" {
			first = r.Path
		}
	}
	return first, nil
}

func event(method, path, template string, params map[string]string) []byte {
	r := httptest.NewRequest(method, path, nil)
	ev := apigw.Event(r, nil, template, params, "bench")
	ev.RequestContext.Authorizer = map[string]any{
		"principalId": "1", rest.ContextUserID: "1", rest.ContextRole: "admin",
		rest.ContextExpires: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
	}
	b, _ := json.Marshal(ev)
	return b
}

// build builds f as deployed (linux/arm64, stripped, lambda.norpc) to take
// its size, and the same for this machine to run it.
func build(f *function, dir string) error {
	name := strings.Fields(f.name)[0]
	deployed := filepath.Join(dir, name+"-arm64")
	f.binary = filepath.Join(dir, name)
	linked := f.binary + ".linked"
	for _, b := range []struct{ out, goarch string }{{deployed, "arm64"}, {linked, runtime.GOARCH}} {
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", b.out, f.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", f.pkg, err, out)
		}
	}
	// The function runs from a copy written in one pass, as a bootstrap
	// unpacked from a deployment package is. The linker writes its output
	// through mmap, and on this machine such a file starts 0.3 to 0.4 ms
	// slower than the same bytes written at once, the floor's as much as
	// the others'.
	bin, err := os.ReadFile(linked)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.binary, bin, 0o755); err != nil {
		return err
	}
	st, err := os.Stat(deployed)
	if err != nil {
		return err
	}
	f.size = st.Size()
	return nil
}

// lambdaEnv is the environment Lambda gives a function, with the stack's
// table names and DynamoDB Local as the endpoint.
func lambdaEnv(cfg dynamo.Config) []string {
	env := []string{
		"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_SESSION_TOKEN=bench",
		"AWS_LAMBDA_FUNCTION_NAME=bench", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"_HANDLER=bootstrap", "TZ=:UTC", "DYNAMODB_ENDPOINT=" + cfg.Endpoint,
		// As the stack sets them: JSON lines with metrics, from INFO up.
		"AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_LOG_LEVEL=INFO", "METRICS_NAMESPACE=Quire/bench",
	}
	for logical, physical := range cfg.Tables {
		env = append(env, dynamo.TableEnv(logical)+"="+physical)
	}
	return env
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
