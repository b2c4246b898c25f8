// Package service builds each resource group's Lambda handler from the
// environment. The functions' mains, the local gateway, the events replay
// and the benchmarks all build handlers here, so they all run the same code.
package service

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/health"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/users"
)

// Config is what every function reads from its environment.
type Config struct {
	DynamoDB dynamo.Config
}

// ConfigFromEnv reads the configuration through getenv.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{DynamoDB: dynamo.ConfigFromEnv(getenv)}
}

// Users builds the handler of the users group.
func Users(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return rest.NewRouter(routes.GroupUsers, (&users.Handlers{Store: dynamo.NewUserStore(db, c.DynamoDB.Tables)}).Routes())
}

// Health builds the handler of the health group. Its client makes one
// attempt per check: a health check reports the state now.
func Health(c Config) (http.Handler, error) {
	db, err := dynamo.NewClient(c.DynamoDB, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	return rest.NewRouter(routes.GroupHealth, (&health.Handlers{DB: dynamo.NewPinger(db, c.DynamoDB.Tables)}).Routes())
}

// Handlers builds the Lambda handler of every group in the route table, as
// the local gateway and the events replay run them.
func Handlers(c Config) (map[string]apigw.Handler, error) {
	builders := map[string]func(Config) (http.Handler, error){
		routes.GroupUsers:  Users,
		routes.GroupHealth: Health,
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
		out[g.Name] = apigw.NewHandler(h)
	}
	return out, nil
}

// Run is the main of a function: it logs as JSON, builds the group's handler
// with build from the environment (exiting when that fails, so a broken
// configuration fails the cold start, not every request) and serves Lambda
// invocations with it.
func Run(build func(Config) (http.Handler, error)) {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	h, err := build(ConfigFromEnv(os.Getenv))
	if err != nil {
		slog.Error("init failed", "err", err)
		os.Exit(1)
	}
	lambda.Start(apigw.NewHandler(h))
}
