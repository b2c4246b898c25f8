// Package service builds each resource group's Lambda handler from the
// environment. The functions' mains, the local gateway, the events replay
// and the benchmarks all build handlers here, so they all run the same code.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/carts"
	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/config"
	"github.com/quireapi/quire/shared/docs"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/health"
	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/openapi"
	"github.com/quireapi/quire/shared/orders"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/telemetry"
	"github.com/quireapi/quire/shared/users"
)

// Config is what the functions read from their environment.
type Config struct {
	DynamoDB dynamo.Config
	// DynamoDBOptions are extra options of every DynamoDB client: the bench
	// counts requests with one.
	DynamoDBOptions []func(*dynamodb.Options)
	Tokens          auth.TokenConfig
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
	// instance's cache may be (see dynamo.CatalogCache); 0, as in tests
	// that write around the functions, reads DynamoDB every time.
	// ConfigFromEnv sets dynamo.DefaultCatalogStaleness.
	CatalogStaleness time.Duration
	// CORS names the origins whose pages may call the API from a browser
	// (CORS_ORIGINS: see rest.ParseCORS); none when unset.
	CORS rest.CORS
	// Log gets each request's line (see telemetry.Logger); nil means
	// slog.Default(). LogJSON says it writes JSON, which can carry the
	// request's metrics, in the CloudWatch namespace MetricsNamespace
	// (METRICS_NAMESPACE, default telemetry.DefaultNamespace; none when
	// empty).
	Log              *slog.Logger
	LogJSON          bool
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

func (c Config) catalog(db *dynamodb.Client) *dynamo.CatalogStore {
	return dynamo.NewCachedCatalogStore(db, c.DynamoDB.Tables, dynamo.CatalogCache{Staleness: c.CatalogStaleness})
}

// ConfigFromEnv reads the configuration through getenv. It returns an error
// for a setting that is present but invalid.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	tokens, err := auth.TokenConfigFromEnv(getenv)
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
		CatalogStaleness: dynamo.DefaultCatalogStaleness,
	}, nil
}

// Users builds the handler of the users group.
func Users(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return rest.NewRouter(routes.GroupUsers, (&users.Handlers{Store: dynamo.NewUserStore(db, c.DynamoDB.Tables)}).Routes(), c.records(db))
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
	maps.Copy(hs, docs.Routes())
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
	return rest.NewRouter(routes.GroupConfig, (&config.Handlers{Store: dynamo.NewConfigStore(db, c.DynamoDB.Tables)}).Routes(), nil)
}

// Auth builds the handler of the auth group (login and JWKS) with the keys
// in SigningKeys.
func Auth(c Config) (http.Handler, error) { return authGroup(c, nil) }

// OpenSecret opens the secret that holds the signing keys, by id. Only the
// mains of the auth and keys functions link the Secrets Manager client (see
// package secrets), whose package init other functions need not pay for.
type OpenSecret func(c Config, id string) (auth.SecretStore, error)

// authGroup builds the auth group's HTTP handler, signing with the keys in
// SigningKeys, or else in the secret SigningKeySecret, which it reads (see
// auth.Handlers.LoadKeys) and never writes.
func authGroup(c Config, open OpenSecret) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, c.DynamoDBOptions...)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	h := &auth.Handlers{
		Accounts: dynamo.NewUserStore(db, c.DynamoDB.Tables), Sessions: dynamo.NewSessionStore(db, c.DynamoDB.Tables), Tokens: c.Tokens,
	}
	router, err := rest.NewRouter(routes.GroupAuth, h.Routes(), nil)
	if err != nil {
		return nil, err
	}
	switch {
	case c.SigningKeys != "":
		keys, err := auth.ParseKeySet([]byte(c.SigningKeys))
		if err != nil {
			return nil, fmt.Errorf("auth: SIGNING_KEYS: %w", err)
		}
		if err := h.SetKeys(keys); err != nil {
			return nil, fmt.Errorf("auth: SIGNING_KEYS: %w", err)
		}
		return router, nil
	case c.SigningKeySecret != "" && open != nil:
		secret, err := open(c, c.SigningKeySecret)
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		h.LoadKeys = func(ctx context.Context) (auth.KeySet, error) {
			data, err := secret.Load(ctx)
			if err != nil {
				return auth.KeySet{}, err
			}
			return auth.ParseKeySet(data)
		}
		// Once per cold start. Before the stack's first deployment has
		// written a key set the secret holds a placeholder: login then
		// answers 503 and tries again on its next request.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Reload(ctx); err != nil {
			slog.Warn("no signing keys yet", "err", err)
		}
		return router, nil
	default:
		return nil, errors.New("auth: set SIGNING_KEYS or SIGNING_KEY_SECRET")
	}
}

// Authorizer builds the Lambda authorizer from the public key set in JWKS,
// or, locally, from the public halves of SigningKeys.
func Authorizer(c Config) (*auth.Authorizer, error) {
	set := c.JWKS
	if set == "" {
		set = c.SigningKeys
	}
	return auth.NewAuthorizer(set, c.Tokens, slog.Default())
}

// Handlers builds the Lambda handler of every group in the route table, as
// the local gateway and the events replay run them.
func Handlers(c Config) (map[string]apigw.Handler, error) {
	builders := map[string]func(Config) (http.Handler, error){
		routes.GroupAuth:    Auth,
		routes.GroupCatalog: Catalog,
		routes.GroupCarts:   Carts,
		routes.GroupOrders:  Orders,
		routes.GroupUsers:   Users,
		routes.GroupHealth:  Health,
		routes.GroupConfig:  Configuration,
	}
	out := map[string]apigw.Handler{}
	for _, g := range routes.Groups() {
		build, ok := builders[g.Name]
		if !ok {
			return nil, fmt.Errorf("service: no builder for group %s", g.Name)
		}
		h, err := build(c)
		if err != nil {
			return nil, err
		}
		out[g.Name] = c.serve(g.Name, h)
	}
	return out, nil
}

// serve is the Lambda handler of group's HTTP handler h: behind the
// cross-origin policy, which also answers OPTIONS (see rest.CORS.Handler),
// with a line per request.
func (c Config) serve(group string, h http.Handler) apigw.Handler {
	return apigw.NewHandler(c.CORS.Handler(h), &telemetry.Logger{
		Log: c.Log, JSON: c.LogJSON, Function: group, Namespace: c.MetricsNamespace, Metrics: os.Stdout,
	})
}

// Gateway builds the local gateway in front of every group's handler and
// the authorizer, whose decisions it caches as the stack does, both logging
// to log: what `make run`, the integration tests and the benchmarks serve.
func Gateway(c Config, log *slog.Logger) (*apigw.Gateway, error) {
	fns, err := Handlers(c)
	if err != nil {
		return nil, err
	}
	a, err := Authorizer(c)
	if err != nil {
		return nil, err
	}
	a.Log = log
	return &apigw.Gateway{Functions: fns, Authorizer: a.Handle, AuthorizerTTL: auth.CacheTTL(c.Tokens.Lifetime), CORS: c.CORS, Log: log}, nil
}

// Run is the main of a function: it builds group's handler with build from
// the environment (exiting when that fails, so a broken configuration fails
// the cold start, not every request) and serves Lambda invocations with it.
func Run(group string, build func(Config) (http.Handler, error)) {
	c := fromEnv()
	h, err := build(c)
	check(err)
	lambda.Start(c.serve(group, h))
}

// RunAuth is the main of the auth function: login and the public keys.
func RunAuth(open OpenSecret) {
	c := fromEnv()
	h, err := authGroup(c, open)
	check(err)
	lambda.Start(c.serve(routes.GroupAuth, h))
}

// RunKeys is the main of the keys function, the only one that may write the
// signing keys' secret: it serves the CloudFormation custom resource that
// writes and rotates them (auth.KeyResource), and nothing else.
func RunKeys(open OpenSecret) {
	c := fromEnv()
	if c.SigningKeySecret == "" {
		check(errors.New("keys: set SIGNING_KEY_SECRET"))
	}
	secret, err := open(c, c.SigningKeySecret)
	check(err)
	rotate := &auth.KeyResource{Secret: secret, Lifetime: c.Tokens.Lifetime}
	lambda.Start(cfn.LambdaWrap(rotate.Handle))
}

// fromEnv reads a function's configuration, and logs through Lambda's log
// handler: in JSON when the function's logging config says so
// (AWS_LAMBDA_LOG_FORMAT, as the stack sets it), at AWS_LAMBDA_LOG_LEVEL,
// each line with the invocation's request id.
func fromEnv() Config {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	c, err := ConfigFromEnv(os.Getenv)
	check(err)
	c.LogJSON = os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON"
	return c
}

func check(err error) {
	if err != nil {
		slog.Error("init failed", "err", err)
		os.Exit(1)
	}
}
