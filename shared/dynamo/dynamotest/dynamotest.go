// Package dynamotest gives integration tests a real DynamoDB: the one
// DYNAMODB_ENDPOINT names, or else a DynamoDB Local that Main starts in
// memory for the whole test binary; and fresh tables for each test.
//
// A package with integration tests calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) }
//
// and each test asks for tables with New. When DynamoDB Local is not
// installed those tests skip, unless QUIRE_REQUIRE_DYNAMODB_LOCAL=1 (as in
// `make test`), which makes the test binary fail instead.
//
// Tests of package dynamo itself must be in package dynamo_test: this
// package imports dynamo.
package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/shared/ddblocal"
	"github.com/quireapi/quire/shared/dynamo"
)

const (
	envEndpoint = "DYNAMODB_ENDPOINT"
	envRequire  = "QUIRE_REQUIRE_DYNAMODB_LOCAL"
)

// state is the DynamoDB of this test binary, set once by Main before any
// test runs and only read afterwards.
var state struct {
	main     bool   // Main was called
	endpoint string // DYNAMODB_ENDPOINT, or the URL of the server Main started
	skip     string // why there is no DynamoDB, when there is none
}

// Main runs the tests of a package against one DynamoDB and exits with their
// status. It uses $DYNAMODB_ENDPOINT when set (exiting with status 1 when
// nothing listens there; when it names several, separated by spaces, the
// test binary takes one no other binary holds, as cmd/ddblocal gives them
// to `make test`), and otherwise starts DynamoDB
// Local in memory before the tests and stops it after them. When DynamoDB
// Local is not installed, the tests that need it skip, saying why; with
// QUIRE_REQUIRE_DYNAMODB_LOCAL=1 Main prints why and exits with status 1
// instead. It also exits with status 1 when an installed DynamoDB Local
// fails to start.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit: it returns m.Run's exit code.
func Run(m *testing.M) int {
	state.main = true
	if eps := strings.Fields(os.Getenv(envEndpoint)); len(eps) > 0 {
		ep, release, err := take(eps)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dynamotest: %s: %v\n", envEndpoint, err)
			return 1
		}
		defer release()
		if err := reachable(ep); err != nil {
			fmt.Fprintf(os.Stderr, "dynamotest: %s=%s: %v\n", envEndpoint, ep, err)
			return 1
		}
		state.endpoint = ep
		return m.Run()
	}
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{})
	if err != nil {
		if errors.Is(err, ddblocal.ErrNotInstalled) && os.Getenv(envRequire) != "1" {
			state.skip = err.Error()
			return m.Run()
		}
		fmt.Fprintf(os.Stderr, "dynamotest: %v\n", err)
		return 1
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "dynamotest: DynamoDB Local did not stop cleanly:", err)
		}
	}()
	state.endpoint = srv.Endpoint()
	code := m.Run()
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "dynamotest: %v\n", err)
	}
	return code
}

// reachable returns an error when nothing accepts connections at endpoint,
// so that a wrong DYNAMODB_ENDPOINT fails once rather than in every test
// after the SDK's retries.
func reachable(endpoint string) error {
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.DialTimeout("tcp", host, 3*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// parseEndpoint parses a DYNAMODB_ENDPOINT's URL.
func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q: want a URL such as http://localhost:8000", endpoint)
	}
	return u, nil
}

// Endpoint returns the URL of the test binary's DynamoDB. It skips the test
// when there is none, and fails it when the package's TestMain does not
// call Main.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	if !state.main {
		tb.Fatal("dynamotest: call dynamotest.Main(m) from this package's TestMain")
	}
	if state.skip != "" {
		tb.Skip("no DynamoDB to test against: " + state.skip)
	}
	return state.endpoint
}

// New returns a client of the test binary's DynamoDB and the names of a
// fresh set of Quire's tables, created for this test only and deleted when
// it ends. It skips the test when there is no DynamoDB, and fails it when
// the tables cannot be created.
func New(tb testing.TB) (*dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: Endpoint(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	names := dynamo.PrefixedTableNames(tablePrefix(tb.Name()))
	tb.Cleanup(func() {
		// Errors are of no interest here: the server may be gone.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, name := range names {
			_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamo.CreateTables(ctx, db, names); err != nil {
		tb.Fatalf("dynamotest: %v", err)
	}
	return db, names
}

// maxTestName bounds the part of a table prefix taken from the test's name;
// with the suffix and a logical name the table name stays well under
// DynamoDB's 255 characters.
const maxTestName = 100

// tablePrefix turns a test's name into a table name prefix of its own:
// characters DynamoDB does not allow in table names become '_', and a random
// suffix keeps apart tests of the same name in different packages or runs.
func tablePrefix(testName string) string {
	name := []byte(testName)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			name[i] = '_'
		}
	}
	if len(name) > maxTestName {
		name = name[:maxTestName]
	}
	return fmt.Sprintf("%s-%08x-", name, rand.Uint32())
}

// Unreachable returns the URL of an endpoint nothing listens on, for tests of
// what happens when DynamoDB is down: a loopback port that was free a moment
// ago. It panics if it cannot find one.
func Unreachable() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("dynamotest: find a free port: %v", err))
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}
