// Package servicetest runs Quire for tests: every function on fresh tables in
// DynamoDB Local, behind the local gateway on a loopback port.
package servicetest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/shared/apigw"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/dynamo/dynamotest"
	"github.com/quireapi/quire/shared/service"
)

// API is a running Quire.
type API struct {
	URL    string
	DB     *dynamodb.Client
	Tables dynamo.TableNames
}

// Config returns the configuration of functions on fresh tables in DynamoDB
// Local, with the client and the tables.
func Config(tb testing.TB) (service.Config, *dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	db, tables := dynamotest.New(tb)
	return service.Config{DynamoDB: dynamo.Config{Endpoint: dynamotest.Endpoint(tb), Tables: tables}}, db, tables
}

// New starts every function on fresh tables behind the local gateway. The
// server stops when the test ends.
func New(tb testing.TB) *API {
	tb.Helper()
	cfg, db, tables := Config(tb)
	fns, err := service.Handlers(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(&apigw.Gateway{Functions: fns, Log: slog.New(slog.DiscardHandler)})
	tb.Cleanup(srv.Close)
	return &API{URL: srv.URL, DB: db, Tables: tables}
}

// Response is a response with its body read.
type Response struct {
	*http.Response
	Body string
}

// Do sends a request with an optional JSON body and returns the response.
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
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return Response{Response: resp, Body: string(b)}
}
