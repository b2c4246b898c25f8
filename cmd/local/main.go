// Command local serves the whole Quire API on localhost, the way the deployed
// stack does: DynamoDB Local (started here unless DYNAMODB_ENDPOINT names a
// running one), the tables of the stack, demo data, and every function behind
// the local gateway. `make run` runs it; Ctrl-C stops all it started.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/outbox/local"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/ddblocal"
)

// localOrigins are the origins allowed when CORS_ORIGINS is unset: pages
// of a development server on this machine, on any port.
const localOrigins = "http://localhost:*,http://127.0.0.1:*"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stderr); err != nil {
		slog.Error("quire stopped", "err", err)
		os.Exit(1)
	}
}

// run serves the API until ctx is done. Every line it prints, to out, is
// one of slog's default logger (which it sets): the steps, the request
// lines of the functions and the gateway's own, all in LOG_FORMAT.
func run(ctx context.Context, getenv func(string) string, out io.Writer) error {
	log, err := logger(getenv("LOG_FORMAT"), out)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	// Listen first: a port in use is the most common failure, and should
	// not wait for DynamoDB Local to start.
	ln, err := listen(getenv)
	if err != nil {
		return err
	}
	defer ln.Close()
	ln = apigw.Listener(ln) // net/http's own refusals in problem+json too
	hosts, err := apigw.Hosts(ln.Addr().(*net.TCPAddr), getenv("ALLOWED_HOSTS"))
	if err != nil {
		return fmt.Errorf("ALLOWED_HOSTS: %w", err)
	}

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
	dataDir := "" // DynamoDB Local's, when this one started it
	if cfg.DynamoDB.Endpoint == "" {
		dataDir = getenv("DATA_DIR")
		where := "memory"
		if dataDir != "" {
			where = dataDir
		}
		slog.Info("starting DynamoDB Local", "data", where)
		srv, err := ddblocal.Start(ctx, ddblocal.Options{DataDir: dataDir})
		if err != nil {
			return fmt.Errorf("start DynamoDB Local: %w", err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				slog.Warn("DynamoDB Local did not stop cleanly", "err", err)
			}
		}()
		cfg.DynamoDB.Endpoint = srv.Endpoint()
		slog.Info("DynamoDB Local answers this machine alone, and no browser", "endpoint", srv.Endpoint())
	} else {
		slog.Info("using DynamoDB", "endpoint", cfg.DynamoDB.Endpoint)
	}
	db, err := dynamo.NewClient(cfg.DynamoDB)
	if err != nil {
		return err
	}
	if err := dynamo.CreateTables(ctx, db, cfg.DynamoDB.Tables); err != nil {
		return err
	}
	added, err := demo.Load(ctx, db, cfg.DynamoDB.Tables, seed)
	if err != nil {
		return err
	}
	slog.Info("tables ready with the demo data", "users_added", added, "books", len(demo.Products()))
	stopEvents, err := followEvents(ctx, db, cfg.DynamoDB, getenv("EVENTS_URL"), dataDir)
	if err != nil {
		return err
	}
	defer stopEvents() // before DynamoDB Local stops
	if err := writeSAMEnv(cfg, cmp.Or(getenv("SAM_ENV_FILE"), api.SAMEnvFile)); err != nil {
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
			slog.Info("injecting a DynamoDB fault", "rule", r.String())
		}
	}

	cfg.LogJSON = getenv("LOG_FORMAT") == "json"
	// The docs page logs in as the README's customer, whose journey (a
	// cart, a payment, the orders) it can then follow.
	cfg.DocsLogin = &swaggerui.Login{Email: demo.CustomerEmail, Password: demo.CustomerPassword}
	if !cfg.LogJSON {
		cfg.MetricsNamespace = "" // metrics in embedded metric format are JSON
	}
	gw, err := api.Gateway(cfg)
	if err != nil {
		return err
	}
	if gw.BasePath, err = apigw.ParseBasePath(getenv("BASE_PATH")); err != nil {
		return fmt.Errorf("BASE_PATH: %w", err)
	}
	gw.Hosts = hosts
	srv := &http.Server{
		Handler:           gw,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),

		// OPTIONS * reaches the gateway, which answers it as any request
		// (404 problem+json), not net/http's bare 200.
		DisableGeneralOptionsHandler: true,
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
		slog.Info("serving under a base path, as a custom domain's mapping would (BASE_PATH)", "base_path", gw.BasePath)
	}
	if addr.IP.IsLoopback() {
		slog.Info("listening on loopback: this machine alone can reach it (HOST=0.0.0.0 opens it to the network)", "addr", ln.Addr().String())
	} else {
		slog.Warn("listening beyond loopback: reachable from the network, with the demo accounts' published passwords", "addr", ln.Addr().String())
	}
	slog.Info("it answers requests for these hosts alone (ALLOWED_HOSTS adds names)", "hosts", strings.Join(hosts, ","))
	slog.Info("pages of these origins may call it from a browser (CORS_ORIGINS)", "origins", strings.Join(cfg.CORS.Origins(), ","))
	slog.Info("Quire is ready: open the docs page, log in there with POST /login and a demo account, and try every route (Ctrl-C stops it)",
		"url", base, "docs", base+"/docs")
	password := seed.AdminPassword
	if password != demo.AdminPassword {
		password = "(SEED_ADMIN_PASSWORD)" // not published: never printed
	}
	slog.Info("demo account", "role", quire.RoleAdmin, "email", seed.AdminEmail, "password", password)
	slog.Info("demo account", "role", quire.RoleCustomer, "email", demo.CustomerEmail, "password", demo.CustomerPassword,
		"refresh_token", demo.CustomerRefreshToken)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	slog.Info("stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// checkpointFile is the file of DATA_DIR that keeps which events were
// delivered (local.Checkpoint).
const checkpointFile = "events-checkpoint.json"

// followEvents delivers the events of the outbox table on DynamoDB Local,
// as the deployed pipe does, from its stream: each as a log line, and when
// url is set, posted to it (see local.Sender). With dataDir, DynamoDB
// Local's data directory, it keeps there the checkpoint of the events
// delivered, written after each one, and starts after it: an event not
// delivered when make run stopped is when it starts again. With none,
// DynamoDB Local starts empty, and the events come from now on. stop stops
// the delivery, and returns once it has stopped.
func followEvents(ctx context.Context, db *dynamodb.Client, c dynamo.Config, url, dataDir string) (stop func(), err error) {
	table := c.Tables.Physical(routes.TableEvents)
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return nil, fmt.Errorf("find the outbox's stream: %w", err)
	}
	if out.Table.LatestStreamArn == nil {
		return nil, fmt.Errorf("the table %s has no stream: delete it (or DATA_DIR) to have it made again", table)
	}
	opts := dynamodbstreams.Options{Region: cmp.Or(c.AWS.Region, "us-east-1"), Credentials: c.AWS.Credentials()}
	if c.Endpoint != "" { // DynamoDB Local serves its streams too
		opts.BaseEndpoint = &c.Endpoint
	}
	streams := dynamodbstreams.New(opts)

	var from *local.Checkpoint
	delivered := func(quire.Event) {}
	if dataDir != "" {
		file := filepath.Join(dataDir, checkpointFile)
		cp, err := local.ReadCheckpoint(file)
		switch {
		case err == nil:
			from = &cp
			slog.Info("delivering the events committed since make run last delivered one", "checkpoint", file)
		case errors.Is(err, fs.ErrNotExist):
			cp = local.NewCheckpoint(time.Now())
			if err := cp.Write(file); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w (delete it to deliver the events committed from now on)", err)
		}
		delivered = func(ev quire.Event) {
			cp.Add(ev)
			if err := cp.Write(file); err != nil {
				slog.Warn("the events' checkpoint was not kept: a restart may deliver events again", "err", err)
			}
		}
	}
	f, err := local.NewFollower(ctx, streams, *out.Table.LatestStreamArn, dynamo.NewEventStore(db, c.Tables), from)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	var sender *local.Sender
	if url != "" {
		sender = local.NewSender(url, delivered)
		running.Go(func() { sender.Run(ctx) })
		slog.Info("events are posted to EVENTS_URL as they commit", "receiver", url)
	}
	running.Go(func() {
		f.Run(ctx, func(ev quire.Event) {
			ev.Source = quire.EventSource(quire.Stack) // make run stands for the stack of the stage without a name
			slog.InfoContext(ctx, "event", "type", ev.Type, "id", ev.ID, "subject", ev.Subject, "data", string(ev.Data))
			if sender != nil {
				sender.Send(ctx, ev)
			} else {
				delivered(ev) // the log line is the delivery
			}
		})
	})
	return func() { cancel(); running.Wait() }, nil
}

// logger writes readable lines to out, or with LOG_FORMAT=json the JSON
// lines a deployed function writes, with their metrics.
func logger(format string, out io.Writer) (*slog.Logger, error) {
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(out, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(out, nil)), nil
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

// devKeys returns the development signing keys kept in file (default
// .cache/signing-keys.json), generating them on first use. They never
// leave this machine; a deployed stack keeps its keys in Secrets Manager.
func devKeys(file string) (string, error) {
	if file == "" {
		file = filepath.Join(".cache", "signing-keys.json")
	}
	if b, err := os.ReadFile(file); err == nil {
		slog.Info("using the development signing keys", "file", file)
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
	slog.Info("generated a development signing key", "file", file)
	return string(b), nil
}

// writeSAMEnv writes file, the --env-vars file with which `sam local
// invoke` runs a function against this DynamoDB and with these signing keys
// (see api.SAMEnv), readable by its owner alone: it holds the private keys.
func writeSAMEnv(cfg service.Config, file string) error {
	b, err := api.SAMEnv(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	slog.Info("wrote sam local invoke's --env-vars for this DynamoDB and these keys", "file", file)
	return nil
}
