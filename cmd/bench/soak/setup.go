package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/ddblocal"
	"github.com/quireapi/quire/internal/users"
)

// env is the Quire under soak: fresh tables in DynamoDB Local with the
// seeded data, the fault proxy in front of them, and the whole API on a
// loopback port.
type env struct {
	direct    *dynamodb.Client // straight to DynamoDB Local: seeding and checks
	tables    dynamo.TableNames
	proxy     *ddbfault.Proxy
	api       *httptest.Server
	admin     account
	customers []account // the demo's and the seeded ones
	seeded    int       // users stored before the run
	logs      *logs
	stops     []func()
}

// account is a user the clients act as.
type account struct {
	id    quire.ID
	token string
}

// The demo customers' ids (see demo.Users) and the admin's.
var (
	demoAdmin     quire.ID = 1
	demoCustomers          = []quire.ID{2, 3}
)

// start builds the env; close stops what it started. Functions log to a
// capture that keeps their errors for the report.
func start(ctx context.Context, o options) (_ *env, err error) {
	e := &env{logs: &logs{byRequest: map[string][]string{}}}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	slog.SetDefault(slog.New(e.logs))
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			return nil, err
		}
		e.stops = append(e.stops, func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "soak: DynamoDB Local did not stop cleanly:", err)
			}
		})
		endpoint = srv.Endpoint()
	}
	e.tables = dynamo.PrefixedTableNames(fmt.Sprintf("soak-%d-", time.Now().UnixNano()))
	if e.direct, err = dynamo.NewClient(dynamo.Config{Endpoint: endpoint, Tables: e.tables}); err != nil {
		return nil, err
	}
	if err := dynamo.CreateTables(ctx, e.direct, e.tables); err != nil {
		return nil, err
	}
	added, err := demo.Load(ctx, e.direct, e.tables, demo.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("load the demo data: %w", err)
	}
	ids, err := seedCustomers(ctx, dynamo.NewUserStore(e.direct, e.tables), o.customers)
	if err != nil {
		return nil, err
	}
	e.seeded = added + len(ids)

	rules, err := ddbfault.ParseProfile(o.profile)
	if err != nil {
		return nil, err
	}
	if e.proxy, err = ddbfault.Start(endpoint, o.seed, rules...); err != nil {
		return nil, err
	}
	e.stops = append(e.stops, func() { e.proxy.Close() })
	keys, err := signingKeys()
	if err != nil {
		return nil, err
	}
	cfg := service.Config{
		DynamoDB:    dynamo.Config{Endpoint: e.proxy.URL(), Tables: e.tables},
		Tokens:      login.TokenConfig{Issuer: login.DefaultIssuer, Audience: login.DefaultAudience, Lifetime: login.MaxLifetime},
		SigningKeys: keys,
	}
	gw, err := api.Gateway(cfg)
	if err != nil {
		return nil, err
	}
	e.api = httptest.NewServer(gw)
	e.stops = append(e.stops, e.api.Close)
	return e, e.sign(cfg, slices.Concat(demoCustomers, ids))
}

// close stops what start started, last first.
func (e *env) close() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
	e.stops = nil
}

// sign issues the admin's token and each customer's.
func (e *env) sign(cfg service.Config, customers []quire.ID) error {
	keys, err := auth.ParseKeySet([]byte(cfg.SigningKeys))
	if err != nil {
		return err
	}
	issuer, err := auth.NewIssuer(keys, cfg.Tokens)
	if err != nil {
		return err
	}
	if e.admin.token, err = issuer.Issue(demoAdmin, quire.RoleAdmin); err != nil {
		return fmt.Errorf("sign the admin's token: %w", err)
	}
	e.admin.id = demoAdmin
	for _, id := range customers {
		t, err := issuer.Issue(id, quire.RoleCustomer)
		if err != nil {
			return fmt.Errorf("sign the token of user %d: %w", id, err)
		}
		e.customers = append(e.customers, account{id: id, token: t})
	}
	return nil
}

// signingKeys returns a new private JWK Set of one ES256 key.
func signingKeys() (string, error) {
	k, err := auth.GenerateKey(time.Now())
	if err != nil {
		return "", fmt.Errorf("generate a signing key: %w", err)
	}
	b, err := auth.KeySet{Keys: []auth.Key{k}}.MarshalJSON()
	return string(b), err
}

// seedBalance is what the seeded customer i starts with: from 60.00 up
// to 199.99 (192.69 for the default 40), so that some run short and see
// their payments refused.
func seedBalance(i int) quire.Money { return 60_00 + quire.Money(i*7_37%140_00) }

// seedCustomers stores n active customers, customer i with seedBalance(i),
// and returns their ids. They have no password: the soak signs their
// tokens itself.
func seedCustomers(ctx context.Context, s *dynamo.UserStore, n int) ([]quire.ID, error) {
	ids := make([]quire.ID, 0, n)
	for i := range n {
		u := users.User{
			Email: fmt.Sprintf("soak-customer-%d@quire.example", i), FirstName: "Soak", LastName: fmt.Sprint("Customer ", i),
			Role: quire.RoleCustomer, Status: users.StatusActive,
		}
		u, err := users.Create(ctx, s, u, "")
		if err != nil {
			return nil, fmt.Errorf("seed customer %d: %w", i, err)
		}
		if _, err := users.Fund(ctx, s, u.ID, seedBalance(i)); err != nil {
			return nil, fmt.Errorf("seed the balance of customer %d: %w", i, err)
		}
		ids = append(ids, u.ID)
	}
	return ids, nil
}

// logs is a slog handler that keeps the functions' and the gateway's
// errors by request id, for the report of any 5xx, and drops the rest.
type logs struct {
	mu        sync.Mutex
	attrs     []slog.Attr
	byRequest map[string][]string
	errors    int
	parent    *logs
}

func (l *logs) root() *logs {
	if l.parent != nil {
		return l.parent.root()
	}
	return l
}

// Enabled keeps errors only.
func (l *logs) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

// Handle keeps the record under its request id.
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	id := ""
	add := func(a slog.Attr) bool {
		if a.Key == "request_id" {
			id = a.Value.String()
		}
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	}
	for _, a := range l.attrs {
		add(a)
	}
	r.Attrs(add)
	root := l.root()
	root.mu.Lock()
	defer root.mu.Unlock()
	root.errors++
	if len(root.byRequest[id]) < 4 {
		root.byRequest[id] = append(root.byRequest[id], b.String())
	}
	return nil
}

// WithAttrs returns a handler that adds attrs to every record.
func (l *logs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logs{attrs: append(l.attrs[:len(l.attrs):len(l.attrs)], attrs...), parent: l.root()}
}

// WithGroup keeps records flat: the capture is for reading, not parsing.
func (l *logs) WithGroup(string) slog.Handler { return l }

// lines returns what was logged for a request id.
func (l *logs) lines(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byRequest[id]
}

// count returns how many errors were logged.
func (l *logs) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errors
}
