// Package dynamotest gives integration tests a real DynamoDB: the one
// DYNAMODB_ENDPOINT names, or else a DynamoDB Local that Main starts in
// memory for the whole test binary; and empty tables for each test.
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
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/ddblocal"
)

const (
	envEndpoint = "DYNAMODB_ENDPOINT"
	envRequire  = "QUIRE_REQUIRE_DYNAMODB_LOCAL"
)

// state is the DynamoDB of this test binary, set once by Main before any
// test runs and only read afterwards.
var state struct {
	main     bool                   // Main was called
	endpoint func() (string, error) // DYNAMODB_ENDPOINT, or the URL of the server started for the binary
}

// Main runs the tests of a package against one DynamoDB and exits with their
// status. It uses $DYNAMODB_ENDPOINT when set (exiting with status 1 when
// nothing listens there; when it names several, separated by spaces, the
// test binary takes one no other binary holds, as cmd/ddblocal gives them
// to `make test`), and otherwise starts DynamoDB Local in memory when the
// first test asks for it (a run of tests that need none starts none), and
// stops it after the tests. When DynamoDB Local is not installed, the tests
// that need it skip, saying why; with QUIRE_REQUIRE_DYNAMODB_LOCAL=1 they
// fail instead, as they do when an installed DynamoDB Local fails to start.
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
		state.endpoint = func() (string, error) { return ep, nil }
		defer tables.drain(ep)
		return m.Run()
	}
	var srv *ddblocal.Server // started by the first test that asks
	state.endpoint = sync.OnceValues(func() (string, error) {
		s, err := ddblocal.Start(context.Background(), ddblocal.Options{})
		if err != nil {
			return "", err
		}
		srv = s
		return s.Endpoint(), nil
	})
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "dynamotest: DynamoDB Local did not stop cleanly:", err)
		}
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
	ep, err := state.endpoint()
	if errors.Is(err, ddblocal.ErrNotInstalled) && os.Getenv(envRequire) != "1" {
		tb.Skip("no DynamoDB to test against: " + err.Error())
	}
	if err != nil {
		tb.Fatalf("dynamotest: %v", err)
	}
	return ep
}

// New returns a client of the test binary's DynamoDB and the names of a
// set of Quire's tables for this test only, empty when it starts. It skips
// the test when there is none, and fails it when the tables cannot be made
// ready.
//
// A set a test has finished with goes back to the binary's pool, and the
// next test that asks takes it emptied: scanning and clearing a set of
// tables with the demo data costs DynamoDB Local about a third of the CPU
// of creating one and deleting it. Main deletes the pool's tables when the
// tests end.
func New(tb testing.TB) (*dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	return NewHolding(tb, nil)
}

// NewHolding is New with tables that hold items and nothing else. A set
// from the pool is brought to items by difference (Items.Reset), which
// costs DynamoDB Local a fraction of emptying it and writing items again
// when it held them, or nearly: as a test that loaded the same items
// leaves it.
func NewHolding(tb testing.TB, items Items) (*dynamodb.Client, dynamo.TableNames) {
	tb.Helper()
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: Endpoint(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	names, err := tables.take(ctx, db)
	if err == nil {
		err = items.Reset(ctx, db, names)
	}
	if err != nil {
		tb.Fatalf("dynamotest: %v", err)
	}
	tb.Cleanup(func() { tables.put(names) })
	return db, names
}

// tables is the binary's pool of table sets.
var tables pool

// A pool holds the table sets no test is using, and every set it made.
type pool struct {
	mu         sync.Mutex
	free, made []dynamo.TableNames
}

// take returns a free set as the last test left it, or else a new, empty
// one.
func (p *pool) take(ctx context.Context, db *dynamodb.Client) (dynamo.TableNames, error) {
	p.mu.Lock()
	var names dynamo.TableNames
	if n := len(p.free); n > 0 {
		names, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if names != nil {
		return names, nil
	}
	names = dynamo.PrefixedTableNames(fmt.Sprintf("test-%08x-", rand.Uint32()))
	p.mu.Lock()
	p.made = append(p.made, names)
	p.mu.Unlock()
	return names, dynamo.CreateTables(ctx, db, names)
}

// put gives a set back to the pool.
func (p *pool) put(names dynamo.TableNames) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, names)
}

// drain deletes every table the pool made. Errors are of no interest
// here: the server may be gone.
func (p *pool) drain(endpoint string) {
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, names := range p.made {
		for _, name := range names {
			_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	}
	p.made, p.free = nil, nil
}

// scan reads the table name consistently, the attributes of projection
// (all when empty), and hands f each page of items.
func scan(ctx context.Context, db *dynamodb.Client, name, projection string, f func([]map[string]types.AttributeValue) error) error {
	in := &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)}
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
	}
	for pages := dynamodb.NewScanPaginator(db, in); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		if err := f(page.Items); err != nil {
			return err
		}
	}
	return nil
}

// Items are the items of a set of Quire's tables, by table
// (dynamo.Table.Name).
type Items map[string][]map[string]types.AttributeValue

// Read returns every item of the tables names.
func Read(ctx context.Context, db *dynamodb.Client, names dynamo.TableNames) (Items, error) {
	var mu sync.Mutex
	items := Items{}
	var reads []func() error
	for _, t := range dynamo.Tables() {
		reads = append(reads, func() error {
			return scan(ctx, db, names.Physical(t.Name), "", func(page []map[string]types.AttributeValue) error {
				mu.Lock()
				defer mu.Unlock()
				items[t.Name] = append(items[t.Name], page...)
				return nil
			})
		})
	}
	return items, quire.Concurrently(reads...)
}

// Reset makes the tables names hold items and nothing else: it reads each
// table, deletes the items that items does not have, and puts those of
// items that the table does not hold as they are, the tables side by side.
// A table that is to hold nothing is read by its keys alone.
func (items Items) Reset(ctx context.Context, db *dynamodb.Client, names dynamo.TableNames) error {
	var resets []func() error
	for _, t := range dynamo.Tables() {
		resets = append(resets, func() error {
			want := map[string]map[string]types.AttributeValue{}
			for _, it := range items[t.Name] {
				want[itemKey(t, it)] = it
			}
			name := names.Physical(t.Name)
			projection := ""
			if len(want) == 0 {
				keys := []string{t.PartitionKey.Name}
				if t.SortKey != nil {
					keys = append(keys, t.SortKey.Name)
				}
				projection = strings.Join(keys, ", ")
			}
			var writes []types.WriteRequest
			err := scan(ctx, db, name, projection, func(page []map[string]types.AttributeValue) error {
				for _, it := range page {
					k := itemKey(t, it)
					switch w, ok := want[k]; {
					case !ok:
						writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(t, it)}})
					case reflect.DeepEqual(w, it):
						delete(want, k) // held as it is
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("reset table %s: %w", name, err)
			}
			for _, it := range want {
				writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
			}
			return dynamo.BatchWrite(ctx, db, name, writes)
		})
	}
	return quire.Concurrently(resets...)
}

// keyOf returns the key attributes of t's item it.
func keyOf(t dynamo.Table, it map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{t.PartitionKey.Name: it[t.PartitionKey.Name]}
	if t.SortKey != nil {
		key[t.SortKey.Name] = it[t.SortKey.Name]
	}
	return key
}

// itemKey names t's item it by its key, for a map.
func itemKey(t dynamo.Table, it map[string]types.AttributeValue) string {
	k := keyValue(it[t.PartitionKey.Name])
	if t.SortKey != nil {
		k += "\x00" + keyValue(it[t.SortKey.Name])
	}
	return k
}

// keyValue writes a key attribute's value with its type: a string, a
// number or bytes.
func keyValue(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S" + v.Value
	case *types.AttributeValueMemberN:
		return "N" + v.Value
	case *types.AttributeValueMemberB:
		return "B" + string(v.Value)
	}
	return fmt.Sprintf("%T", v)
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

// Snapshot returns every item of every table of Quire's in db under the
// physical names tables gives, each as "<table> <item as JSON>", sorted: a
// test compares two to tell what a request changed, if anything.
func Snapshot(tb testing.TB, db *dynamodb.Client, tables dynamo.TableNames) []string {
	tb.Helper()
	var out []string
	for _, table := range dynamo.Tables() {
		name := tables.Physical(table.Name)
		p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &name, ConsistentRead: aws.Bool(true)})
		for p.HasMorePages() {
			page, err := p.NextPage(tb.Context())
			if err != nil {
				tb.Fatal(err)
			}
			for _, item := range page.Items {
				b, err := json.Marshal(item)
				if err != nil {
					tb.Fatal(err)
				}
				out = append(out, table.Name+" "+string(b))
			}
		}
	}
	slices.Sort(out)
	return out
}
