// Package api builds the whole of Quire's API in one process: every resource
// group's handler and the authorizer behind the local gateway, as `make run`,
// the events replay, the tests and the benchmarks serve it. It also holds the
// mains of the auth and keys functions. It links token signing (package
// auth), which package service, and so every other function, does not.
package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

// Auth builds the handler of the auth group (login and JWKS) with the keys
// in SigningKeys.
func Auth(c service.Config) (http.Handler, error) { return authGroup(c, nil) }

// OpenSecret opens the secret that holds the signing keys, by id. Only the
// mains of the auth and keys functions link the Secrets Manager client (see
// package secrets), whose package init other functions need not pay for.
type OpenSecret func(c service.Config, id string) (auth.SecretStore, error)

// authGroup builds the auth group's HTTP handler, signing with the keys in
// SigningKeys, or else in the secret SigningKeySecret, which it reads (see
// auth.KeyRing.LoadKeys) and never writes.
func authGroup(c service.Config, open OpenSecret) (http.Handler, error) {
	s, err := c.OpenStores(routes.GroupAuth)
	if err != nil {
		return nil, err
	}
	h := &auth.KeyRing{Tokens: c.Tokens}
	api := &httpapi.Auth{Accounts: s.Accounts, Sessions: s.Sessions, Passwords: passwords(c), Keys: h}
	router, err := rest.NewRouter(routes.GroupAuth, api.Routes(), nil, c.Callers(s))
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
		store, err := open(c, c.SigningKeySecret)
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		var secret auth.KeySource = store // read, never written: the auth function's role
		h.LoadKeys = func(ctx context.Context) (auth.KeySet, error) {
			data, err := secret.Load(ctx)
			if err != nil {
				return auth.KeySet{}, err
			}
			return auth.ParseKeySet(data)
		}
		// Once per cold start, as init ends. Before the stack's first
		// deployment has written a key set the secret holds a
		// placeholder: login then answers 503 and tries again on its
		// next request.
		awsenv.WarmUp(h.LoadInBackground(5 * time.Second))
		return router, nil
	default:
		return nil, errors.New("auth: set SIGNING_KEYS or SIGNING_KEY_SECRET")
	}
}

// Authorizer builds the Lambda authorizer from the public key set in JWKS,
// or, locally, from the public halves of SigningKeys.
func Authorizer(c service.Config) (*authorizer.Authorizer, error) {
	set := c.JWKS
	if set == "" {
		set = c.SigningKeys
	}
	return authorizer.NewAuthorizer(set, c.Tokens)
}

// Handlers builds the Lambda handler of every group in the route table, as
// the local gateway and the events replay run them.
func Handlers(c service.Config) (map[string]apigw.Handler, error) {
	out := map[string]apigw.Handler{}
	for _, g := range routes.Groups() {
		h, err := Handler(c, g.Name)
		if err != nil {
			return nil, err
		}
		out[g.Name] = h
	}
	return out, nil
}

// passwords is c's hasher of passwords: argon2id's at its recommended
// cost, unless c names another.
func passwords(c service.Config) password.Hasher {
	if c.Passwords != nil {
		return c.Passwords
	}
	return argon2id.Hasher
}

// Handler builds the Lambda handler of group, as its function's main does.
func Handler(c service.Config, group string) (apigw.Handler, error) {
	build, ok := map[string]func(service.Config) (http.Handler, error){
		routes.GroupAuth:    Auth,
		routes.GroupCatalog: service.Catalog,
		routes.GroupCarts:   service.Carts,
		routes.GroupOrders:  service.Orders,
		routes.GroupUsers:   service.Users(passwords(c)),
		routes.GroupHealth:  service.Health,
		routes.GroupConfig:  service.Configuration,
	}[group]
	if !ok {
		return nil, fmt.Errorf("api: no builder for group %s", group)
	}
	h, err := build(c)
	if err != nil {
		return nil, err
	}
	return c.Serve(group, h), nil
}

// Gateway builds the local gateway in front of every group's handler and
// the authorizer, whose decisions it caches as the stack does: what `make
// run`, the integration tests and the benchmarks serve.
func Gateway(c service.Config) (*apigw.Gateway, error) {
	fns, err := Handlers(c)
	if err != nil {
		return nil, err
	}
	a, err := Authorizer(c)
	if err != nil {
		return nil, err
	}
	return &apigw.Gateway{Functions: fns, Authorizer: a.Handle, AuthorizerTTL: authorizer.CacheTTL(c.Tokens.Lifetime), CORS: c.CORS}, nil
}

// RunAuth is the main of the auth function: login and the public keys.
func RunAuth(open OpenSecret) {
	service.Run(routes.GroupAuth, func(c service.Config) (http.Handler, error) { return authGroup(c, open) })
}

// RunKeys is the main of the keys function, the only one that may write the
// signing keys' secret: it serves the CloudFormation custom resource that
// writes and rotates them (auth.KeyResource), and nothing else.
func RunKeys(open OpenSecret) {
	c := service.FromEnv()
	if c.SigningKeySecret == "" {
		service.Must(errors.New("keys: set SIGNING_KEY_SECRET"))
	}
	secret, err := open(c, c.SigningKeySecret)
	service.Must(err)
	rotate := &auth.KeyResource{Secret: secret, Lifetime: c.Tokens.Lifetime}
	lambda.Start(cfn.LambdaWrap(func(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
		return rotate.Handle(ctx, auth.KeyRequest{Type: string(ev.RequestType), PhysicalID: ev.PhysicalResourceID,
			Properties: ev.ResourceProperties, OldProperties: ev.OldResourceProperties})
	}))
}
