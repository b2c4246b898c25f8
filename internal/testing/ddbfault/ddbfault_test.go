package ddbfault_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// setup returns a proxy in front of the test's DynamoDB, a client of the
// proxy that makes one attempt per call (so that each fault shows as it
// is), and the physical name of the users table.
func setup(t *testing.T, rules ...ddbfault.Rule) (*ddbfault.Proxy, *dynamodb.Client, string) {
	t.Helper()
	p, db, tables := setupTables(t, rules...)
	return p, db, tables.Physical(routes.TableUsers)
}

// setupTables is setup with the names of every table.
func setupTables(t *testing.T, rules ...ddbfault.Rule) (*ddbfault.Proxy, *dynamodb.Client, dynamo.TableNames) {
	t.Helper()
	_, tables := dynamotest.New(t)
	p, err := ddbfault.Start(dynamotest.Endpoint(t), 1, rules...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: p.URL()}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		t.Fatal(err)
	}
	return p, db, tables
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}
}

func put(t *testing.T, db *dynamodb.Client, table, pk string) error {
	t.Helper()
	_, err := db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: key(pk)})
	return err
}

func exists(t *testing.T, db *dynamodb.Client, table, pk string) bool {
	t.Helper()
	out, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &table, Key: key(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetItem %s: %v", pk, err)
	}
	return out.Item != nil
}

func code(err error) string {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		return ae.ErrorCode()
	}
	return ""
}

// Each fault reaches the SDK as DynamoDB's own failure would, and only the
// lost answer's write is applied.
func TestFaults(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	for _, c := range []struct {
		fault   ddbfault.Kind
		code    string // the SDK's error code; "" for a network error
		applied bool
	}{
		{ddbfault.Throttle, "ThrottlingException", false},
		{ddbfault.Throughput, "ProvisionedThroughputExceededException", false},
		{ddbfault.Internal, "InternalServerError", false},
		{ddbfault.Reset, "", false},
		{ddbfault.Lost, "", true},
	} {
		t.Run(string(c.fault), func(t *testing.T) {
			p, db, users := setup(t)
			p.Set(ddbfault.Rule{Fault: c.fault, Operation: "PutItem"})
			err := put(t, db, users, "a")
			if err == nil {
				t.Fatal("PutItem succeeded through the fault")
			}
			if got := code(err); got != c.code {
				t.Errorf("error code %q, want %q (%v)", got, c.code, err)
			}
			if c.code == "" && !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "EOF") {
				t.Errorf("error %v, want a dropped connection", err)
			}
			p.Set()
			if got := exists(t, db, users, "a"); got != c.applied {
				t.Errorf("item written: %v, want %v", got, c.applied)
			}
			if n := p.Injected()[c.fault]; n != 1 {
				t.Errorf("Injected()[%s] = %d, want 1", c.fault, n)
			}
		})
	}
}

// A transaction can be cancelled for throttling, with a reason per item.
func TestTransactionThrottle(t *testing.T) {
	p, db, users := setup(t, ddbfault.Rule{Fault: ddbfault.TransactionThrottle})
	_, err := db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &users, Item: key("a")}},
		{Put: &types.Put{TableName: &users, Item: key("b")}},
	}})
	tce, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		t.Fatalf("error %v, want TransactionCanceledException", err)
	}
	if len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "ThrottlingError" {
		t.Errorf("reasons %+v, want two ThrottlingError", tce.CancellationReasons)
	}
	p.Set()
	if exists(t, db, users, "a") {
		t.Error("the throttled transaction wrote")
	}
	// A GetItem is not a transaction: the rule leaves it alone.
	p.Set(ddbfault.Rule{Fault: ddbfault.TransactionThrottle})
	exists(t, db, users, "a")
}

// Rules pick calls by operation, table, count and probability.
func TestRuleMatching(t *testing.T) {
	p, db, users := setup(t)
	_, tables := dynamotest.New(t)
	carts := tables.Physical(routes.TableCarts)

	p.Set(ddbfault.Rule{Fault: ddbfault.Throttle, Operation: "PutItem", Table: routes.TableUsers, Count: 2})
	for i, want := range []bool{false, false, true} {
		if err := put(t, db, users, "a"); (err == nil) != want {
			t.Errorf("users PutItem %d: %v, want success %v", i+1, err, want)
		}
	}
	if err := put(t, db, carts, "a"); err != nil {
		t.Errorf("carts PutItem: %v, want no fault on another table", err)
	}
	exists(t, db, users, "a") // another operation

	p.Set(ddbfault.Rule{Fault: ddbfault.Throttle, Probability: 0.5})
	failed := 0
	for range 200 {
		if put(t, db, users, "b") != nil {
			failed++
		}
	}
	if failed < 60 || failed > 140 {
		t.Errorf("%d of 200 calls failed at 50%%", failed)
	}
	if got := p.Calls("PutItem"); got != 204 {
		t.Errorf("Calls(PutItem) = %d, want 204", got)
	}
}

// A delay holds the call, then forwards it.
func TestDelay(t *testing.T) {
	p, db, users := setup(t, ddbfault.Rule{Fault: ddbfault.Delay, Delay: 300 * time.Millisecond, Operation: "PutItem"})
	start := time.Now()
	if err := put(t, db, users, "a"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("PutItem took %v, want at least the 300ms delay", d)
	}
	p.Set()
	if !exists(t, db, users, "a") {
		t.Error("the delayed write was not forwarded")
	}
}

// Refuse closes the port: connections are refused until Accept.
func TestRefuse(t *testing.T) {
	p, db, users := setup(t)
	if err := p.Refuse(); err != nil {
		t.Fatal(err)
	}
	err := put(t, db, users, "a")
	if err == nil || !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("PutItem with the port closed: %v, want a refused connection", err)
	}
	if err := p.Accept(); err != nil {
		t.Fatal(err)
	}
	if err := put(t, db, users, "a"); err != nil {
		t.Errorf("PutItem after Accept: %v", err)
	}
}

// Stale hides items from an eventually consistent read, and leaves a
// consistent one alone.
func TestStale(t *testing.T) {
	p, db, users := setup(t)
	if err := put(t, db, users, "a"); err != nil {
		t.Fatal(err)
	}
	p.Set(ddbfault.Rule{Fault: ddbfault.Stale})
	if !exists(t, db, users, "a") {
		t.Error("a consistent read does not see the item")
	}
	out, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &users, Key: key("a")})
	if err != nil || out.Item != nil {
		t.Errorf("an eventually consistent read: %v, item %v; want no item", err, out.Item)
	}
	batch, err := db.BatchGetItem(t.Context(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		users: {Keys: []map[string]types.AttributeValue{key("a")}},
	}})
	if err != nil || len(batch.Responses[users]) != 0 {
		t.Errorf("an eventually consistent batch: %v, %d items; want none", err, len(batch.Responses[users]))
	}
	if n := p.Injected()[ddbfault.Stale]; n != 2 {
		t.Errorf("%d stale reads, want 2", n)
	}
}
