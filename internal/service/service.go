// Package service builds each resource group's Lambda handler from the
// environment. The functions' mains build theirs here, and package api builds
// the whole API (the local gateway, the events replay, the tests and the
// benchmarks) from the same builders, so they all run the same code. It
// links neither token signing nor password hashing: the functions that need
// them get them from their mains (see api.RunAuth and Users).
package service

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/cache"
	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/health"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/openapi"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/telemetry"
	"github.com/quireapi/quire/internal/users"
)

// Config is what the functions read from their environment.
type Config struct {
	DynamoDB dynamo.Config
	// DynamoDBOptions are extra options of every DynamoDB client: the bench
	// counts requests with one.
	DynamoDBOptions []func(*dynamodb.Options)
	// Sent, when set, is told each DynamoDB access a resource group's
	// function makes outside AWS, which its grants allowed (see
	// OpenStores): the tests list what each function sends.
	Sent   func(group string, a dynamo.Access)
	Tokens login.TokenConfig
	// SigningKeys is a private JWK Set (SIGNING_KEYS): how login gets its
	// keys locally. Deployed, login reads them from the Secrets Manager
	// secret SigningKeySecret (SIGNING_KEY_SECRET) instead.
	SigningKeys      string
	SigningKeySecret string
	// JWKS is the public JWK Set the authorizer verifies with; locally it
	// may be left out, and the public halves of SigningKeys serve.
	JWKS string
	// IdempotencyTTL is how long the answer to an idempotency key is kept
	// (IDEMPOTENCY_TTL).
	IdempotencyTTL time.Duration
	// CatalogStaleness is how old a catalog read served from a function
	// instance's cache may be (see cache.CatalogCache); 0, as in tests
	// that write around the functions, reads DynamoDB every time.
	// ConfigFromEnv sets cache.DefaultCatalogStaleness.
	CatalogStaleness time.Duration
	// CORS names the origins whose pages may call the API from a browser
	// (CORS_ORIGINS: see rest.ParseCORS); none when unset.
	CORS rest.CORS
	// LogJSON says slog's default logger, which gets each request's line
	// (see telemetry.Logger), writes JSON, which can carry the request's
	// metrics, in the CloudWatch namespace MetricsNamespace
	// (METRICS_NAMESPACE, default telemetry.DefaultNamespace; none when
	// empty).
	LogJSON bool
	// DocsLogin is the docs page's example login: make run's demo admin;
	// none deployed.
	DocsLogin        *swaggerui.Login
	MetricsNamespace string
	// Passwords hashes and checks passwords in the auth and users groups;
	// nil: argon2id.Hasher, its recommended cost. The tests hash at
	// argon2id.MinCost.
	Passwords password.Hasher
	// Stores, when set, are the stores every group's handler uses instead
	// of DynamoDB's: the tests run Quire on memory with them (package
	// memstore, which no function links). DynamoDB is then not called.
	Stores *Stores
}

// Stores are the stores of the groups' handlers.
type Stores struct {
	Users    users.Store
	Accounts login.Accounts
	// Callers are the accounts of the callers of protected routes, which
	// every group's router reads (see access.Decide).
	Callers  access.Accounts
	Sessions login.Sessions
	Catalog  cache.CatalogSource
	Carts    carts.Store
	Orders   orders.Store
	Config   config.Store
	Records  idempotency.Store
	Health   health.Pinger
	// As, when set (the in-memory stores'), returns the stores held to the
	// grants of g's function, as IAM holds it (see memstore.DB.As), telling
	// sent each access allowed: what OpenStores gives g's handler.
	As func(g routes.Group, sent func(dynamo.Access)) *Stores
}

// Bounds of IDEMPOTENCY_TTL.
const (
	MinIdempotencyTTL = time.Minute
	MaxIdempotencyTTL = 7 * 24 * time.Hour
)

// OpenStores returns the stores of group's handler: c.Stores when set,
// else DynamoDB's, on one client with c's options and then opts. Outside
// AWS (on c.Stores, or on a DynamoDB of c.DynamoDB.Endpoint), the stores
// of a resource group are held to the group's grants, as IAM holds the
// deployed function (see dynamo.Enforce and Stores.As); any other name,
// such as the tests' own stores', is held to none. DynamoDB's are the
// stores group's routes use, and no other: every group but health reads
// its callers' accounts; any other name gets every store. It returns
// dynamo.NewClient's error, naming group.
func (c Config) OpenStores(group string, opts ...func(*dynamodb.Options)) (*Stores, error) {
	g, isGroup := routes.GroupNamed(group)
	var sent func(dynamo.Access)
	if isGroup && c.Sent != nil {
		sent = func(a dynamo.Access) { c.Sent(g.Name, a) }
	}
	if c.Stores != nil {
		if isGroup && c.Stores.As != nil {
			return c.Stores.As(g, sent), nil
		}
		return c.Stores, nil
	}
	opts = append(slices.Clip(c.DynamoDBOptions), opts...)
	if isGroup && c.DynamoDB.Endpoint != "" {
		opts = append(opts, dynamo.Enforce(g, c.DynamoDB.Tables, sent)) // AWS's IAM, where AWS is not
	}
	db, err := dynamo.NewClient(c.DynamoDB, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", group, err)
	}
	t := c.DynamoDB.Tables
	if group == routes.GroupHealth {
		return &Stores{Health: dynamo.NewPinger(db, t)}, nil
	}
	u := dynamo.NewUserStore(db, t)
	s := &Stores{Callers: u}
	switch group {
	case routes.GroupAuth:
		s.Accounts, s.Sessions = u, dynamo.NewSessionStore(db, t)
	case routes.GroupUsers:
		s.Users, s.Records = u, dynamo.NewRecordStore(db, t, c.IdempotencyTTL)
	case routes.GroupCatalog:
		s.Catalog, s.Records = dynamo.NewCatalogStore(db, t), dynamo.NewRecordStore(db, t, c.IdempotencyTTL)
	case routes.GroupCarts:
		s.Carts, s.Catalog, s.Records = dynamo.NewCartStore(db, t), dynamo.NewCatalogStore(db, t), dynamo.NewRecordStore(db, t, c.IdempotencyTTL)
	case routes.GroupOrders:
		s.Orders, s.Carts, s.Catalog = dynamo.NewOrderStore(db, t), dynamo.NewCartStore(db, t), dynamo.NewCatalogStore(db, t)
		s.Records = dynamo.NewRecordStore(db, t, c.IdempotencyTTL)
	case routes.GroupConfig:
		s.Config = dynamo.NewConfigStore(db, t)
	default:
		s.Users, s.Accounts, s.Sessions, s.Catalog = u, u, dynamo.NewSessionStore(db, t), dynamo.NewCatalogStore(db, t)
		s.Carts, s.Orders, s.Config = dynamo.NewCartStore(db, t), dynamo.NewOrderStore(db, t), dynamo.NewConfigStore(db, t)
		s.Records, s.Health = dynamo.NewRecordStore(db, t, c.IdempotencyTTL), dynamo.NewPinger(db, t)
	}
	return s, nil
}

// Callers reads the accounts of the callers of protected routes from s,
// a customer's reads held for the catalog's staleness (see access.Callers).
func (c Config) Callers(s *Stores) *access.Callers {
	return &access.Callers{Accounts: s.Callers, Staleness: c.CatalogStaleness}
}

func (c Config) catalog(s *Stores) *cache.Catalog {
	return cache.NewCatalog(s.Catalog, cache.CatalogCache{Staleness: c.CatalogStaleness})
}

// ConfigFromEnv reads the configuration through getenv. It returns an error
// for a setting that is present but invalid.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	tokens, err := login.TokenConfigFromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	ttl := idempotency.DefaultTTL
	if s := getenv("IDEMPOTENCY_TTL"); s != "" {
		if ttl, err = time.ParseDuration(s); err != nil || ttl < MinIdempotencyTTL || ttl > MaxIdempotencyTTL {
			return Config{}, fmt.Errorf("IDEMPOTENCY_TTL %q: want a duration from %v to %v", s, MinIdempotencyTTL, MaxIdempotencyTTL)
		}
	}
	cors, err := rest.ParseCORS(getenv("CORS_ORIGINS"))
	if err != nil {
		return Config{}, fmt.Errorf("CORS_ORIGINS: %w", err)
	}
	namespace := getenv("METRICS_NAMESPACE")
	if namespace == "" {
		namespace = telemetry.DefaultNamespace
	}
	return Config{
		CORS:             cors,
		MetricsNamespace: namespace,
		DynamoDB:         dynamo.ConfigFromEnv(getenv),
		Tokens:           tokens,
		SigningKeys:      getenv("SIGNING_KEYS"),
		SigningKeySecret: getenv("SIGNING_KEY_SECRET"),
		JWKS:             getenv("JWKS"),
		IdempotencyTTL:   ttl,
		CatalogStaleness: cache.DefaultCatalogStaleness,
	}, nil
}

// Users returns the builder of the users group's handler, which hashes
// passwords with passwords.
func Users(passwords password.Hasher) func(Config) (http.Handler, error) {
	return func(c Config) (http.Handler, error) {
		s, err := c.OpenStores(routes.GroupUsers)
		if err != nil {
			return nil, err
		}
		h := &httpapi.Users{Store: s.Users, Passwords: passwords}
		return rest.NewRouter(routes.GroupUsers, h.Routes(), s.Records, c.Callers(s))
	}
}

// Health builds the handler of the health group. Its client makes one
// attempt per check: a health check reports the state now.
func Health(c Config) (http.Handler, error) {
	once := func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }
	s, err := c.OpenStores(routes.GroupHealth, once)
	if err != nil {
		return nil, err
	}
	hs := (&health.Handlers{DB: s.Health}).Routes()
	hs["GET /openapi.json"] = openapi.Handler
	maps.Copy(hs, swaggerui.Routes(c.DocsLogin))
	return rest.NewRouter(routes.GroupHealth, hs, nil, nil)
}

// Catalog builds the handler of the catalog group.
func Catalog(c Config) (http.Handler, error) {
	s, err := c.OpenStores(routes.GroupCatalog)
	if err != nil {
		return nil, err
	}
	return rest.NewRouter(routes.GroupCatalog, (&httpapi.Catalog{Store: c.catalog(s)}).Routes(), s.Records, c.Callers(s))
}

// Carts builds the handler of the carts group.
func Carts(c Config) (http.Handler, error) {
	s, err := c.OpenStores(routes.GroupCarts)
	if err != nil {
		return nil, err
	}
	return rest.NewRouter(routes.GroupCarts, (&httpapi.Carts{Store: s.Carts, Products: c.catalog(s)}).Routes(), s.Records, c.Callers(s))
}

// Orders builds the handler of the orders group.
func Orders(c Config) (http.Handler, error) {
	s, err := c.OpenStores(routes.GroupOrders)
	if err != nil {
		return nil, err
	}
	return rest.NewRouter(routes.GroupOrders, (&httpapi.Orders{
		Store: s.Orders, Catalog: c.catalog(s), Carts: s.Carts,
	}).Routes(), s.Records, c.Callers(s))
}

// Configuration builds the handler of the config group: the
// configuration document.
func Configuration(c Config) (http.Handler, error) {
	s, err := c.OpenStores(routes.GroupConfig)
	if err != nil {
		return nil, err
	}
	store := &cache.Config{Store: s.Config}
	return rest.NewRouter(routes.GroupConfig, (&httpapi.Config{Store: store}).Routes(), nil, c.Callers(s))
}

// Serve is the Lambda handler of group's HTTP handler h: behind the
// cross-origin policy, which also answers OPTIONS (see rest.CORS.Handler),
// with a line per request.
func (c Config) Serve(group string, h http.Handler) apigw.Handler {
	return apigw.NewHandler(c.CORS.Handler(h), &telemetry.Logger{
		JSON: c.LogJSON, Function: group, Namespace: c.MetricsNamespace, Metrics: os.Stdout,
	})
}

// Run is the main of a function: it builds group's handler with build from
// the environment (exiting when that fails, so a broken configuration fails
// the cold start, not every request) and serves Lambda invocations with it.
func Run(group string, build func(Config) (http.Handler, error)) {
	c := FromEnv()
	h, err := build(c)
	Must(err)
	awsenv.StartWarmUps()
	lambda.Start(c.Serve(group, h))
}

// FromEnv reads a function's configuration, exiting when it is invalid,
// with DynamoDB's connection opened ahead (dynamo.Config.WarmUp), and
// logs through Lambda's log handler: in JSON when the function's logging
// config says so (AWS_LAMBDA_LOG_FORMAT, as the stack sets it), at
// AWS_LAMBDA_LOG_LEVEL, each line with the invocation's request id.
func FromEnv() Config {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	c, err := ConfigFromEnv(os.Getenv)
	Must(err)
	c.LogJSON = os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON"
	// A function's first connection to DynamoDB opens during init,
	// beside the rest of it, not on its first request.
	c.DynamoDB.WarmUp = true
	return c
}

// Must fails a function's init with err, unless it is nil: it logs err and
// exits, so that the cold start fails rather than every request.
func Must(err error) {
	if err != nil {
		slog.Error("init failed", "err", err)
		os.Exit(1)
	}
}
