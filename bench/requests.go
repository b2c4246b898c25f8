package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/users"
)

// counter records the DynamoDB operations a client calls, by SDK middleware.
type counter struct {
	mu  sync.Mutex
	ops []string
}

func (c *counter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("CountRequests",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.ops = append(c.ops, awsmiddleware.GetOperationName(ctx))
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func (c *counter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := c.ops
	c.ops = nil
	return ops
}

// requestCase is one request of a route, with the count it should make.
type requestCase struct {
	route, name    string
	method, path   string
	body           string
	status, target int // target 0: no target
}

// usersCases returns a request for every users route. They run in order on
// the demo data (users 1 to 3).
func usersCases() []requestCase {
	put := `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","role":"customer","status":"ACTIVE"}`
	moved := strings.Replace(put, "grace@", "grace.hopper@", 1)
	return []requestCase{
		{"GET /users/{id}", "", "GET", "/users/1", "", 200, 1},
		{"GET /users", "one page of 2", "GET", "/users?limit=2", "", 200, 1},
		{"POST /users", "", "POST", "/users", `{"email":"new@example.com","first_name":"N","last_name":"U"}`, 201, 0},
		{"PUT /users/{id}", "same email", "PUT", "/users/2", put, 200, 0},
		{"PUT /users/{id}", "new email", "PUT", "/users/2", moved, 200, 0},
		{"DELETE /users/{id}", "", "DELETE", "/users/3", "", 204, 0},
	}
}

type requestRow struct {
	requestCase
	ops []string
}

// countRequests runs every users case through the users handler on db's
// tables, counting DynamoDB requests, and fails when a users route has no
// case.
func countRequests(cfg dynamo.Config) ([]requestRow, error) {
	c := &counter{}
	db, err := dynamo.NewClient(cfg, c.option)
	if err != nil {
		return nil, err
	}
	h, err := rest.NewRouter(routes.GroupUsers, (&users.Handlers{Store: dynamo.NewUserStore(db, cfg.Tables)}).Routes())
	if err != nil {
		return nil, err
	}
	gw := &apigw.Gateway{Functions: map[string]apigw.Handler{routes.GroupUsers: apigw.NewHandler(h)}, Log: slog.New(slog.DiscardHandler)}
	covered := map[string]bool{}
	var rows []requestRow
	for _, rc := range usersCases() {
		req := httptest.NewRequest(rc.method, rc.path, strings.NewReader(rc.body))
		if rc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		if rec.Code != rc.status {
			return nil, fmt.Errorf("%s %s = %d, want %d: %s", rc.method, rc.path, rec.Code, rc.status, rec.Body)
		}
		rows = append(rows, requestRow{rc, c.take()})
		covered[rc.route] = true
	}
	var missing []string
	for _, r := range routes.ForGroup(routes.GroupUsers) {
		if !covered[r.Key()] {
			missing = append(missing, r.Key())
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("routes without a request count case: %s", strings.Join(missing, ", "))
	}
	return rows, nil
}
