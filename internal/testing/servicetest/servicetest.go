// Package servicetest runs Quire for tests: every function and the
// authorizer on a fresh in-memory store (package memstore), or on fresh
// tables in DynamoDB Local for a test of DynamoDB's own behaviour, behind
// the local gateway on a loopback port, with clients that carry tokens.
package servicetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/memstore"
	"github.com/quireapi/quire/internal/users"
)

// API is a running Quire.
type API struct {
	// URL is where the API is served: its base path (Option.BasePath)
	// included.
	URL string
	// DB and Tables are the API's DynamoDB and tables; nil and empty when
	// it runs on memory (see Option.DynamoDB).
	DB     *dynamodb.Client
	Tables dynamo.TableNames
	// Stores are the API's stores, DynamoDB's or memory's, for tests that
	// read or write around the functions (around a fault proxy too).
	Stores service.Stores
	outbox interface {
		Events(context.Context) ([]quire.Event, error)
	}
	Keys   auth.KeySet
	issuer *auth.Issuer
	base   string
	demo   demoStores
}

// demoStores are where demo data is written.
type demoStores struct {
	catalog demo.Catalog
	orders  demo.Orders
}

// Config returns the configuration of functions on fresh tables in DynamoDB
// Local with a new signing key, with the client and the tables.
func Config(tb testing.TB) (service.Config, *dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	return config(tb, nil)
}

// config is Config on tables holding items and nothing else
// (dynamotest.NewHolding).
func config(tb testing.TB, items dynamotest.Items) (service.Config, *dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	captureLogs()
	db, tables := dynamotest.NewHolding(tb, items)
	return service.Config{
		DynamoDB:         dynamo.Config{Endpoint: dynamotest.Endpoint(tb), Tables: tables},
		Tokens:           tokens(tb),
		SigningKeys:      signingKeys(tb),
		Passwords:        argon2id.MinCost,
		LogJSON:          true,
		MetricsNamespace: namespace,
	}, db, tables
}

// signingKeys returns a private JWK Set of a new signing key.
func signingKeys(tb testing.TB) string {
	tb.Helper()
	key, err := auth.GenerateKey(time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := auth.KeySet{Keys: []auth.Key{key}}.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return string(keys)
}

// tokens returns the default token settings.
func tokens(tb testing.TB) login.TokenConfig {
	tb.Helper()
	tokens, err := login.TokenConfigFromEnv(func(string) string { return "" })
	if err != nil {
		tb.Fatal(err)
	}
	return tokens
}

// MemoryConfig returns the configuration of functions on a fresh in-memory
// store with a new signing key, and the store.
func MemoryConfig(tb testing.TB) (service.Config, *memstore.DB) {
	tb.Helper()
	captureLogs()
	mem := memstore.New(0)
	cfg := service.Config{
		Tokens: tokens(tb), SigningKeys: signingKeys(tb), Passwords: argon2id.MinCost, LogJSON: true, MetricsNamespace: namespace,
		Stores: memoryStores(mem),
	}
	return cfg, mem
}

// memoryStores are the stores of the in-memory database mem, whose views
// held to a group's grants each function gets (see service.Stores.As).
func memoryStores(mem *memstore.DB) *service.Stores {
	u := mem.Users()
	return &service.Stores{
		Users: u, Accounts: u, Callers: u, Sessions: mem.Sessions(), Catalog: mem.Catalog(), Carts: mem.Carts(),
		Orders: mem.Orders(), Config: mem.Config(), Records: mem.Records(), Health: mem.Pinger(),
		As: func(g routes.Group, sent func(dynamo.Access)) *service.Stores { return memoryStores(mem.As(g, sent)) },
	}
}

// Option changes how New runs Quire: its configuration, before the
// functions are built from it, and the functions, before they serve.
type Option struct {
	Config    func(*service.Config)
	Functions func(map[string]apigw.Handler)
	// BasePath serves the API under a base path, as a custom domain's
	// mapping does (see apigw.Gateway.BasePath).
	BasePath string
	// DynamoDB runs the API on fresh tables in DynamoDB Local, and skips
	// the test when there is none: for a test of what DynamoDB itself
	// does (its requests, their capacity, its items, faults between it
	// and the functions). Without it the API runs on memory.
	DynamoDB bool
	// Demo stores all the demo data around the functions before the test
	// starts, as demo.Load does in DynamoDB.
	Demo bool
}

// On runs test on each store, as subtests named after them: on memory,
// then on DynamoDB Local as a whole, skipped when there is none.
func On(t *testing.T, test func(t *testing.T, o Option)) {
	t.Run("memory", func(t *testing.T) { test(t, Option{}) })
	t.Run("DynamoDB", func(t *testing.T) {
		dynamotest.Endpoint(t) // skip every case at once without DynamoDB
		test(t, Option{DynamoDB: true})
	})
}

// New starts every function and the authorizer behind the local gateway,
// which caches authorizer decisions as the stack does: on a fresh in-memory
// store, or on fresh tables in DynamoDB Local when an option asks for it.
// The server stops when the test ends.
func New(tb testing.TB, opts ...Option) *API {
	tb.Helper()
	onDynamoDB, withDemo := false, false
	for _, o := range opts {
		onDynamoDB, withDemo = onDynamoDB || o.DynamoDB, withDemo || o.Demo
	}
	var a API
	var cfg service.Config
	if onDynamoDB {
		if withDemo {
			cfg, a.DB, a.Tables = demoConfig(tb)
		} else {
			cfg, a.DB, a.Tables = Config(tb)
		}
		s, err := cfg.OpenStores("tests")
		if err != nil {
			tb.Fatal(err)
		}
		a.Stores, a.demo = *s, demoStores{dynamo.NewCatalogStore(a.DB, a.Tables), dynamo.NewOrderStore(a.DB, a.Tables)}
		a.outbox = dynamo.NewEventStore(a.DB, a.Tables)
	} else {
		var mem *memstore.DB
		cfg, mem = MemoryConfig(tb)
		a.Stores, a.demo, a.outbox = *cfg.Stores, demoStores{mem.Catalog(), mem.Orders()}, mem
	}
	for _, o := range opts {
		if o.Config != nil {
			o.Config(&cfg)
		}
	}
	if !onDynamoDB {
		a.Stores = *cfg.Stores // an option's, when one sets them
	}
	gw, err := api.Gateway(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	for _, o := range opts {
		if o.Functions != nil {
			o.Functions(gw.Functions)
		}
		if o.BasePath != "" {
			gw.BasePath = o.BasePath
		}
	}
	keys, err := auth.ParseKeySet([]byte(cfg.SigningKeys))
	if err != nil {
		tb.Fatal(err)
	}
	issuer, err := auth.NewIssuer(keys, cfg.Tokens)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	tb.Cleanup(srv.Close)
	a.URL, a.Keys, a.issuer, a.base = srv.URL+gw.BasePath, keys, issuer, gw.BasePath
	if withDemo && !onDynamoDB {
		loadDemo(tb, a.Stores, a.demo)
	}
	return &a
}

// Events returns the events the API's outbox holds, in the order of their
// time, each as make run publishes it (from the source of the stack
// without a stage's name), which CheckEvent finds valid.
func (a *API) Events(tb testing.TB) []quire.Event {
	tb.Helper()
	evs, err := a.outbox.Events(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	for i := range evs {
		evs[i].Source = quire.EventSource(quire.Stack)
		b, err := json.Marshal(evs[i])
		if err != nil {
			tb.Fatal(err)
		}
		if err := CheckEvent(b); err != nil {
			tb.Error(err)
		}
	}
	return evs
}

// SeedCatalog stores the demo catalog (demo.SeedCatalog) around the
// functions.
func (a *API) SeedCatalog(tb testing.TB) {
	tb.Helper()
	if err := demo.SeedCatalog(tb.Context(), a.demo.catalog); err != nil {
		tb.Fatal(err)
	}
}

// PutProduct stores p around the functions, featured at rank when it is
// above 0.
func (a *API) PutProduct(tb testing.TB, p catalog.Product, rank int) {
	tb.Helper()
	if err := a.demo.catalog.PutProduct(tb.Context(), p, rank); err != nil {
		tb.Fatal(err)
	}
}

// loadDemo stores all the demo data in s and d, as demo.Load does in
// DynamoDB.
func loadDemo(tb testing.TB, s service.Stores, d demoStores) {
	tb.Helper()
	ctx := tb.Context()
	_, err := demo.Seed(ctx, s.Users, DemoOptions())
	for _, seed := range []func() error{
		func() error { return demo.SeedCatalog(ctx, d.catalog) },
		func() error { return demo.SeedShop(ctx, s.Carts, d.orders) },
		func() error { return demo.SeedSession(ctx, s.Sessions, time.Now()) },
		func() error { return demo.SeedConfig(ctx, s.Config) },
	} {
		if err != nil {
			break
		}
		err = seed()
	}
	if err != nil {
		tb.Fatalf("load the demo data: %v", err)
	}
}

// DemoOptions are demo.DefaultOptions with the passwords hashed at the
// least cost, as the functions of Config and MemoryConfig hash them: a
// test's passwords guard nothing, and each login checks one.
func DemoOptions() demo.Options {
	o := demo.DefaultOptions()
	o.Passwords = argon2id.MinCost
	return o
}

// DemoConfig returns the configuration of functions on a fresh store
// holding the demo data: tables in DynamoDB Local when o.DynamoDB is set
// (skipping the test when there is none), else memory.
func DemoConfig(tb testing.TB, o Option) service.Config {
	tb.Helper()
	if o.DynamoDB {
		cfg, _, _ := demoConfig(tb)
		return cfg
	}
	cfg, mem := MemoryConfig(tb)
	loadDemo(tb, *cfg.Stores, demoStores{mem.Catalog(), mem.Orders()})
	return cfg
}

// demoItems holds the items demo.Load stores, read back from the first set
// of tables a test binary loads with it (see demoConfig).
var demoItems struct {
	sync.Mutex
	items dynamotest.Items
}

// demoConfig is Config on tables holding the demo data. The first call in
// a test binary runs demo.Load on fresh tables and reads back what it
// stored; every later one takes tables brought back to those items by
// difference (dynamotest.NewHolding): the same items at a fraction of
// DynamoDB Local's CPU, where demo.Load writes through the stores'
// transactions.
func demoConfig(tb testing.TB) (service.Config, *dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	demoItems.Lock()
	if items := demoItems.items; items != nil {
		demoItems.Unlock()
		return config(tb, items)
	}
	defer demoItems.Unlock()
	cfg, db, tables := Config(tb)
	ctx := tb.Context()
	_, err := demo.Load(ctx, db, tables, DemoOptions())
	if err == nil {
		demoItems.items, err = dynamotest.Read(ctx, db, tables)
	}
	if err != nil {
		demoItems.items = nil
		tb.Fatalf("load the demo data: %v", err)
	}
	return cfg, db, tables
}

// Client sends requests with a bearer token, or with none.
type Client struct {
	api   *API
	token string
}

// As returns a client with a token for the user id with role, signed as
// login signs them, whose account exists, as a signed-in caller's does: when
// the tables hold no user id, As stores one, with role, an email of its own
// and no password.
func (a *API) As(tb testing.TB, id quire.ID, role quire.Role) *Client {
	tb.Helper()
	s := a.Stores.Users
	switch _, err := s.Get(tb.Context(), id); quire.ErrorCode(err) {
	case "":
	case quire.ENOTFOUND:
		// The account alone, without its event: the tests' outbox holds
		// the events of the requests they send.
		u := users.Change{User: users.Signed(users.User{ID: id, Email: fmt.Sprintf("caller-%d@quire.example", id), FirstName: "Test", LastName: "Caller",
			Role: role, Status: users.StatusActive}, time.Now()).User}
		// A parallel test may store the same caller first.
		if err := s.CommitCreate(tb.Context(), u, "", nil); err != nil && !errors.As(err, new(*quire.Stale)) {
			tb.Fatalf("store the account of user %d: %v", id, err)
		}
	default:
		tb.Fatal(err)
	}
	return a.Gone(tb, id, role)
}

// Gone returns a client with a token for the user id with role, signed as
// login signs them, whose account need not exist: the token of an account
// deleted since it was issued.
func (a *API) Gone(tb testing.TB, id quire.ID, role quire.Role) *Client {
	tb.Helper()
	token, err := a.issuer.Issue(id, role)
	if err != nil {
		tb.Fatal(err)
	}
	return &Client{api: a, token: token}
}

// InSession returns a client as As does, whose token belongs to the session
// sid (its sid claim), as the tokens login and refresh issue: DELETE
// /session ends that session. The session need not exist.
func (a *API) InSession(tb testing.TB, id quire.ID, role quire.Role, sid string) *Client {
	tb.Helper()
	token, err := a.issuer.IssueInSession(id, role, sid)
	if err != nil {
		tb.Fatal(err)
	}
	return &Client{api: a, token: token}
}

// Bearer returns a client that sends token, such as one from POST /login.
func (a *API) Bearer(token string) *Client { return &Client{api: a, token: token} }

// Token returns the client's bearer token.
func (c *Client) Token() string { return c.token }

// Do sends a request with the client's token; see API.Do.
func (c *Client) Do(tb testing.TB, method, path, body string, header ...string) Response {
	tb.Helper()
	if c.token == "" { // Anonymous's
		return c.api.Do(tb, method, path, body, header...)
	}
	return c.api.Do(tb, method, path, body, append([]string{"Authorization", "Bearer " + c.token}, header...)...)
}

// Anonymous is a client without a token, of the public routes.
func (a *API) Anonymous() *Client { return &Client{api: a} }

// Tries is how many times Retry sends a request at most, as the clients
// of the soak do (docs/faults.md#how-a-client-should-retry).
const Tries = 8

// Retry sends a request as Do does, and again while the answer says to, as
// docs/faults.md tells a client: an answer 503 or with Retry-After (a 409
// conflict, a 429) is sent again, with the same headers (an
// Idempotency-Key among them), after what Retry-After says, at most a
// second, plus up to 100 ms of jitter; Tries times at most. It returns the
// last answer, and logs each one it retried.
func (c *Client) Retry(tb testing.TB, method, path, body string, header ...string) Response {
	tb.Helper()
	for try := 1; ; try++ {
		r := c.Do(tb, method, path, body, header...)
		after := r.Header.Get("Retry-After")
		if try == Tries || r.StatusCode != http.StatusServiceUnavailable && after == "" {
			return r
		}
		tb.Logf("%s %s: try %d answered %d with Retry-After %q: sent again", method, path, try, r.StatusCode, after)
		wait := time.Second
		if s, err := strconv.Atoi(after); err == nil {
			wait = min(time.Duration(s)*time.Second, wait)
		}
		time.Sleep(wait + rand.N(100*time.Millisecond))
	}
}

// Expect sends a request as Do does and fails the test unless it answers
// status, and a problem when status is an error.
func (c *Client) Expect(tb testing.TB, method, path, body string, status int) Response {
	tb.Helper()
	r := c.Do(tb, method, path, body)
	if r.StatusCode != status {
		tb.Fatalf("%s %s %s = %d %s, want %d", method, path, body, r.StatusCode, r.Body, status)
	}
	if status >= 400 && r.Header.Get("Content-Type") != rest.ProblemMediaType {
		tb.Errorf("%s %s: Content-Type %q", method, path, r.Header.Get("Content-Type"))
	}
	return r
}

// ExpectProblem sends a request as Do does and fails the test unless it
// answers status with a problem of code's type, and returns the problem.
func (c *Client) ExpectProblem(tb testing.TB, method, path, body string, status int, code string, header ...string) rest.Problem {
	tb.Helper()
	r := c.Do(tb, method, path, body, header...)
	var p rest.Problem
	if r.StatusCode != status || r.Header.Get("Content-Type") != rest.ProblemMediaType || json.Unmarshal([]byte(r.Body), &p) != nil {
		tb.Fatalf("%s %s %s = %d %s %s, want a %d problem", method, path, body, r.StatusCode, r.Header.Get("Content-Type"), r.Body, status)
	}
	if p.Type != rest.ProblemType(code) {
		tb.Errorf("%s %s %s: problem type %s, want %s", method, path, body, p.Type, rest.ProblemType(code))
	}
	return p
}

// client sends requests as they are: it neither asks for gzip nor
// decompresses, so tests see the Content-Encoding the API chose, nor
// follows a redirect, so tests see it.
var client = &http.Client{
	Transport:     &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Response is a response with its body read.
type Response struct {
	*http.Response
	Body string
}

// Do sends a request with an optional JSON body and returns the response,
// failing the test when the response does not match the OpenAPI document.
func (a *API) Do(tb testing.TB, method, path, body string, header ...string) Response {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.URL+path, r)
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	note([]byte(body), req.Header.Get("Authorization"))
	note(b, "")
	contract := req // the document's paths are the API's, without a base path
	if a.base != "" {
		contract = req.Clone(req.Context())
		contract.URL.Path, contract.URL.RawPath = strings.TrimPrefix(req.URL.Path, a.base), ""
	}
	if err := CheckContract(contract, resp.StatusCode, resp.Header, b); err != nil {
		tb.Errorf("%s %s: the answer does not match the OpenAPI document: %v\n%d %.500s", method, path, err, resp.StatusCode, b)
	}
	return Response{Response: resp, Body: string(b)}
}

// Faults returns a fault proxy in front of the test's DynamoDB, with no
// rules yet, and the Option that runs the API on DynamoDB with its
// functions calling DynamoDB through it. Tests seed data through API.DB and
// API.Stores, which go around it. The proxy stops when the test ends.
func Faults(tb testing.TB) (*ddbfault.Proxy, Option) {
	tb.Helper()
	p, err := ddbfault.Start(dynamotest.Endpoint(tb), 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p, Option{DynamoDB: true, Config: func(c *service.Config) { c.DynamoDB.Endpoint = p.URL() }}
}

// ConflictHold is how long Conflicts holds each transaction, its items in
// flight, before it reaches DynamoDB Local: about what a transaction takes
// on DynamoDB when nothing else slows it (the "contended" fault profile
// takes 20 ms).
const ConflictHold = 10 * time.Millisecond

// Conflicts returns a fault proxy as Faults does, with the one rule that
// has it emulate DynamoDB's transaction conflicts (ddbfault.Conflict,
// holding each transaction ConflictHold), and the Option that has the
// functions call DynamoDB through it: concurrent requests that touch the
// same items then conflict as they do on DynamoDB, which DynamoDB Local
// never shows. Setting other rules on the proxy ends the emulation, unless
// they include a Conflict rule.
func Conflicts(tb testing.TB) (*ddbfault.Proxy, Option) {
	tb.Helper()
	p, opt := Faults(tb)
	p.Set(ddbfault.Rule{Fault: ddbfault.Conflict, Delay: ConflictHold})
	return p, opt
}

// Links returns the links in a JSON body: the values of every _links member
// (account-like users' actions) and the href of every member of links
// (catalog items').
func Links(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			if l, ok := v["_links"].(map[string]any); ok {
				for _, href := range l {
					if href, ok := href.(string); ok {
						out = append(out, href)
					}
				}
			}
			if l, ok := v["links"].([]any); ok {
				for _, e := range l {
					if e, ok := e.(map[string]any); ok {
						if href, ok := e["href"].(string); ok {
							out = append(out, href)
						}
					}
				}
			}
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// Decode decodes r's JSON body into a T, which may take only some of its
// members (Do checks the whole body against the OpenAPI document), failing
// the test when it does not decode. Numbers decode as json.Number where T
// takes any.
func Decode[T any](tb testing.TB, r Response) T {
	tb.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("%s %s: body %q: %v", r.Request.Method, r.Request.URL.Path, r.Body, err)
	}
	return v
}

// WantProblem fails the test unless r is a problem+json answer with status,
// the problem type of code, and a request id; it returns the problem.
func WantProblem(tb testing.TB, r Response, status int, code string) rest.Problem {
	tb.Helper()
	if r.StatusCode != status || r.Header.Get("Content-Type") != rest.ProblemMediaType {
		tb.Fatalf("%s %s = %d %s %s; want %d problem+json", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Header.Get("Content-Type"), r.Body, status)
	}
	p := Decode[rest.Problem](tb, r)
	if p.Type != rest.ProblemType(code) || p.Status != status || p.RequestID == "" {
		tb.Errorf("problem = %+v; want type %s, status %d and a request id", p, rest.ProblemType(code), status)
	}
	return p
}
