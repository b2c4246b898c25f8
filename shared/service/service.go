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

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/cache"
	"github.com/quireapi/quire/shared/carts"
	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/config"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/health"
	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/login"
	"github.com/quireapi/quire/shared/openapi"
	"github.com/quireapi/quire/shared/orders"
	"github.com/quireapi/quire/shared/password"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/swaggerui"
	"github.com/quireapi/quire/shared/telemetry"
	"github.com/quireapi/quire/shared/users"
)

// Config is what the functions read from their environment.
type Config struct {
	DynamoDB dynamo.Config
	// DynamoDBOptions are extra options of every DynamoDB client: the bench
	// counts requests with one.
	DynamoDBOptions []func(*dynamodb.Options)
	Tokens          login.TokenConfig
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
}

// Bounds of IDEMPOTENCY_TTL.
const (
	MinIdempotencyTTL = time.Minute
	MaxIdempotencyTTL = 7 * 24 * time.Hour
)

func (c Config) records(db *dynamodb.Client) *dynamo.RecordStore {
	return dynamo.NewRecordStore(db, c.DynamoDB.Tables, c.IdempotencyTTL)
}

func (c Config) catalog(db *dynamodb.Client) *cache.Catalog {
	return cache.NewCatalog(dynamo.NewCatalogStore(db, c.DynamoDB.Tables), cache.CatalogCache{Staleness: c.CatalogStaleness})
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
		db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
		if err != nil {
			return nil, fmt.Errorf("users: %w", err)
		}
		h := &users.Handlers{Store: dynamo.NewUserStore(db, c.DynamoDB.Tables), Passwords: passwords}
		return rest.NewRouter(routes.GroupUsers, h.Routes(), c.records(db))
	}
}

// Health builds the handler of the health group. Its client makes one
// attempt per check: a health check reports the state now.
func Health(c Config) (http.Handler, error) {
	once := func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }
	db, err := dynamo.NewClient(c.DynamoDB, append(slices.Clip(c.DynamoDBOptions), once)...)
	if err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	hs := (&health.Handlers{DB: dynamo.NewPinger(db, c.DynamoDB.Tables)}).Routes()
	hs["GET /openapi.json"] = openapi.Handler
	maps.Copy(hs, swaggerui.Routes(c.DocsLogin))
	return rest.NewRouter(routes.GroupHealth, hs, nil)
}

// Catalog builds the handler of the catalog group.
func Catalog(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return rest.NewRouter(routes.GroupCatalog, (&catalog.Handlers{Store: c.catalog(db)}).Routes(), c.records(db))
}

// Carts builds the handler of the carts group.
func Carts(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("carts: %w", err)
	}
	return rest.NewRouter(routes.GroupCarts, (&carts.Handlers{
		Store: dynamo.NewCartStore(db, c.DynamoDB.Tables), Products: c.catalog(db),
	}).Routes(), c.records(db))
}

// Orders builds the handler of the orders group.
func Orders(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	t := c.DynamoDB.Tables
	return rest.NewRouter(routes.GroupOrders, (&orders.Handlers{
		Store: dynamo.NewOrderStore(db, t), Catalog: c.catalog(db), Carts: dynamo.NewCartStore(db, t),
	}).Routes(), c.records(db))
}

// Configuration builds the handler of the config group: the
// configuration document.
func Configuration(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	store := &cache.Config{Store: dynamo.NewConfigStore(db, c.DynamoDB.Tables)}
	return rest.NewRouter(routes.GroupConfig, (&config.Handlers{Store: store}).Routes(), nil)
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
	lambda.Start(c.Serve(group, h))
}

// FromEnv reads a function's configuration, exiting when it is invalid, and
// logs through Lambda's log handler: in JSON when the function's logging
// config says so (AWS_LAMBDA_LOG_FORMAT, as the stack sets it), at
// AWS_LAMBDA_LOG_LEVEL, each line with the invocation's request id.
func FromEnv() Config {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	c, err := ConfigFromEnv(os.Getenv)
	Must(err)
	c.LogJSON = os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON"
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
