// Command local serves the whole Quire API on localhost, the way the deployed
// stack does: DynamoDB Local (started here unless DYNAMODB_ENDPOINT names a
// running one), the tables of the stack, demo data, and every function behind
// the local gateway. `make run` runs it; Ctrl-C stops all it started.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quireapi/quire/shared/api"
	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/config"
	"github.com/quireapi/quire/shared/ddbfault"
	"github.com/quireapi/quire/shared/ddblocal"
	"github.com/quireapi/quire/shared/demo"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/service"
)

// localOrigins are the origins allowed when CORS_ORIGINS is unset: pages
// of a development server on this machine, on any port.
const localOrigins = "http://localhost:*,http://127.0.0.1:*"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "quire:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	// Listen first: a port in use is the most common failure, and should
	// not wait for DynamoDB Local to start.
	ln, err := listen(getenv)
	if err != nil {
		return err
	}
	defer ln.Close()

	cfg, err := service.ConfigFromEnv(func(k string) string {
		if v := getenv(k); v != "" || k != "CORS_ORIGINS" {
			return v
		}
		return localOrigins
	})
	if err != nil {
		return err
	}
	seed, err := demo.OptionsFromEnv(getenv)
	if err != nil {
		return err
	}
	if cfg.SigningKeys == "" {
		if cfg.SigningKeys, err = devKeys(getenv("KEYS_FILE")); err != nil {
			return err
		}
	}
	if cfg.DynamoDB.Endpoint == "" {
		dataDir := getenv("DATA_DIR")
		where := "in memory"
		if dataDir != "" {
			where = "in " + dataDir
		}
		step("starting DynamoDB Local (%s)", where)
		srv, err := ddblocal.Start(ctx, ddblocal.Options{DataDir: dataDir})
		if err != nil {
			return fmt.Errorf("start DynamoDB Local: %w", err)
		}
		defer srv.Stop()
		cfg.DynamoDB.Endpoint = srv.Endpoint()
	}
	step("using DynamoDB at %s", cfg.DynamoDB.Endpoint)
	db, err := dynamo.NewClient(cfg.DynamoDB)
	if err != nil {
		return err
	}
	step("creating tables")
	if err := dynamo.CreateTables(ctx, db, cfg.DynamoDB.Tables); err != nil {
		return err
	}
	added, err := demo.Load(ctx, db, cfg.DynamoDB.Tables, seed)
	if err != nil {
		return err
	}
	step("loaded demo data: %d users added, %d books, a cart, an order and a login session", added, len(demo.Products()))
	if err := writeSAMEnv(cfg); err != nil {
		return err
	}
	if profile := getenv("FAULTS"); profile != "" {
		rules, err := ddbfault.ParseProfile(profile)
		if err != nil {
			return fmt.Errorf("FAULTS: %w", err)
		}
		proxy, err := ddbfault.Start(cfg.DynamoDB.Endpoint, uint64(time.Now().UnixNano()), rules...)
		if err != nil {
			return err
		}
		defer proxy.Close()
		cfg.DynamoDB.Endpoint = proxy.URL()
		for _, r := range rules {
			step("injecting DynamoDB fault: %s", r)
		}
	}

	log, err := logger(getenv("LOG_FORMAT"))
	if err != nil {
		return err
	}
	cfg.Log, cfg.LogJSON = log, getenv("LOG_FORMAT") == "json"
	if !cfg.LogJSON {
		cfg.MetricsNamespace = "" // metrics in embedded metric format are JSON
	}
	gw, err := api.Gateway(cfg, log)
	if err != nil {
		return err
	}
	if gw.BasePath, err = apigw.ParseBasePath(getenv("BASE_PATH")); err != nil {
		return fmt.Errorf("BASE_PATH: %w", err)
	}
	srv := &http.Server{
		Handler:           gw,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().(*net.TCPAddr)
	base := "http://" + addr.String()
	if addr.IP.IsUnspecified() {
		base = "http://localhost:" + strconv.Itoa(addr.Port)
	}
	if gw.BasePath != "" {
		base += gw.BasePath
		step("serving under the base path %s, as a custom domain's mapping would (BASE_PATH)", gw.BasePath)
	}
	if addr.IP.IsLoopback() {
		step("listening on %s only: this machine alone can reach it (HOST=0.0.0.0 opens it to the network)", ln.Addr())
	} else {
		step("listening on %s: reachable from the network, with the demo accounts' well-known passwords", ln.Addr())
	}
	step("pages of %s may call it from a browser (CORS_ORIGINS)", strings.Join(cfg.CORS.Origins(), ", "))
	fmt.Fprintf(os.Stderr, `
Quire is ready at %[1]s (Ctrl-C stops it)

Read and try it in a browser at %[1]s/docs: log in there with POST /login
and the demo admin's email and password below, and the page uses the token.

Log in as the demo admin (%[2]s, password %[3]s),
list the users, and record 20.00 that Grace paid the shop outside the API
(deposits are the back office's; a customer cannot make one):

  TOKEN=$(curl -s %[1]s/login -H 'Content-Type: application/json' \
       -d '{"email":"%[2]s","password":"%[3]s"}' | jq -r .access_token)
  curl -i %[1]s/users -H "Authorization: Bearer $TOKEN"
  curl -i %[1]s/admin/users -H "Authorization: Bearer $TOKEN"
  curl -i -X POST %[1]s/users/2/deposit -H "Authorization: Bearer $TOKEN" \
       -H 'Content-Type: application/json' -d '{"amount": 20.00}'

As the demo customer (%[4]s, password %[5]s), see her cart and pay it
from her balance:

  TOKEN=$(curl -s %[1]s/login -H 'Content-Type: application/json' \
       -d '{"email":"%[4]s","password":"%[5]s"}' | jq -r .access_token)
  curl -i %[1]s/cart -H "Authorization: Bearer $TOKEN"
  curl -i -X POST %[1]s/pay -H "Authorization: Bearer $TOKEN" -H 'Idempotency-Key: my-first-payment'
  curl -i %[1]s/users/2 -H "Authorization: Bearer $TOKEN" -H 'Accept: application/vnd.quire.v2+json'

Every resource has an ETag: revalidate instead of downloading again (304),
and write only over what you read (412 if it changed meanwhile):

  curl -i %[1]s/config -H "Authorization: Bearer $TOKEN" -H 'If-None-Match: %[6]s'
  curl -si %[1]s/config -H "Authorization: Bearer $TOKEN" -H 'Accept-Encoding: gzip' | head -12

Public routes need no token:

  curl -i %[1]s/landing
  curl -i %[1]s/health
  curl -s %[1]s/openapi.json | jq .info
  curl -i -X POST %[1]s/users -H 'Content-Type: application/json' \
       -d '{"email":"you@example.com","first_name":"Your","last_name":"Name","password":"a long passphrase"}'

`, base, seed.AdminEmail, seed.AdminPassword, demo.CustomerEmail, demo.CustomerPassword, demoConfigTag())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	step("stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// logger writes readable lines, or with LOG_FORMAT=json the JSON lines a
// deployed function writes, with their metrics.
func logger(format string) (*slog.Logger, error) {
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("LOG_FORMAT %q: want text or json", format)
}

// listen listens on HOST (default 127.0.0.1: the demo accounts have
// well-known passwords) and PORT (default 8080).
func listen(getenv func(string) string) (net.Listener, error) {
	host, port := getenv("HOST"), getenv("PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "8080"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s (%w); stop what uses it or set PORT or HOST", net.JoinHostPort(host, port), err)
	}
	return ln, nil
}

// demoConfigTag is the ETag of the demo configuration document in v1.
func demoConfigTag() string {
	d, err := config.Parse([]byte(demo.Config))
	if err != nil {
		return err.Error()
	}
	return rest.Tag(d.Hash, 1, false)
}

// devKeys returns the development signing keys kept in file (default
// .cache/signing-keys.json), generating them on first use. They never
// leave this machine; a deployed stack keeps its keys in Secrets Manager.
func devKeys(file string) (string, error) {
	if file == "" {
		file = filepath.Join(".cache", "signing-keys.json")
	}
	if b, err := os.ReadFile(file); err == nil {
		step("using the signing keys in %s", file)
		return string(b), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	key, err := auth.GenerateKey(time.Now())
	if err != nil {
		return "", err
	}
	b, err := auth.KeySet{Keys: []auth.Key{key}}.MarshalJSON()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return "", fmt.Errorf("write development signing key: %w", err)
	}
	step("generated a development signing key in %s", file)
	return string(b), nil
}

// writeSAMEnv writes the --env-vars file with which `sam local invoke` runs
// a function against this DynamoDB and with these signing keys (see
// api.SAMEnv), readable by its owner alone: it holds the private keys.
func writeSAMEnv(cfg service.Config) error {
	b, err := api.SAMEnv(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(api.SAMEnvFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(api.SAMEnvFile, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", api.SAMEnvFile, err)
	}
	step("wrote %s: sam local invoke's --env-vars for this DynamoDB and these keys", api.SAMEnvFile)
	return nil
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "quire: "+format+"\n", args...)
}
