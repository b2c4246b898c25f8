package dynamotest_test

import (
	"context"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

func TestNewCreatesActiveTables(t *testing.T) {
	db, names := dynamotest.New(t)
	if len(names) != len(dynamo.Tables()) {
		t.Fatalf("New gave %d table names, want one per table (%d)", len(names), len(dynamo.Tables()))
	}
	for _, table := range dynamo.Tables() {
		name := names.Physical(table.Name)
		if name == table.Name {
			t.Errorf("table %q has no test prefix", name)
		}
		out, err := db.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Errorf("describe %s: %v", name, err)
			continue
		}
		if out.Table.TableStatus != types.TableStatusActive {
			t.Errorf("table %s is %s, want ACTIVE", name, out.Table.TableStatus)
		}
	}
}

// A test's tables are its own while it runs, and empty when it starts,
// whatever the test before it wrote to them.
func TestNewTablesAreTheTestsOwnAndEmpty(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	var first, second dynamo.TableNames
	t.Run("first", func(t *testing.T) {
		var db *dynamodb.Client
		db, first = dynamotest.New(t)
		t.Run("at once", func(t *testing.T) {
			_, other := dynamotest.New(t)
			for logical, name := range first {
				if other[logical] == name {
					t.Errorf("two tests share table %s", name)
				}
			}
		})
		for _, table := range dynamo.Tables() {
			item := map[string]types.AttributeValue{}
			for _, k := range []*dynamo.Key{&table.PartitionKey, table.SortKey} {
				if k != nil {
					item[k.Name] = map[string]types.AttributeValue{"S": &types.AttributeValueMemberS{Value: "x"}, "N": &types.AttributeValueMemberN{Value: "1"}}[k.Type]
				}
			}
			if _, err := db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(first.Physical(table.Name)), Item: item}); err != nil {
				t.Fatalf("put an item in %s: %v", table.Name, err)
			}
		}
	})
	var db *dynamodb.Client
	t.Run("second", func(t *testing.T) { db, second = dynamotest.New(t) })
	if first == nil || second == nil {
		t.FailNow()
	}
	if !maps.Equal(first, second) {
		t.Fatalf("the second test has tables %v, want the first's, emptied: a set of tables is reused", second)
	}
	for _, name := range second {
		out, err := db.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != 0 {
			t.Errorf("table %s holds %d items when the test starts, want none", name, out.Count)
		}
	}
}

func TestUnreachable(t *testing.T) {
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: dynamotest.Unreachable()},
		func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{}); err == nil {
		t.Error("ListTables against Unreachable() succeeded")
	}
}

// A test's tables from NewHolding hold the items and nothing else, whatever
// the test before it added, changed or deleted.
func TestNewHoldingHoldsTheItems(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	// In each table, two items: keyed "a" and "b" (and 1 for a sort key),
	// with a value.
	item := func(table dynamo.Table, key, value string) map[string]types.AttributeValue {
		it := map[string]types.AttributeValue{"value": &types.AttributeValueMemberS{Value: value}}
		for _, k := range []*dynamo.Key{&table.PartitionKey, table.SortKey} {
			if k != nil {
				it[k.Name] = map[string]types.AttributeValue{"S": &types.AttributeValueMemberS{Value: key}, "N": &types.AttributeValueMemberN{Value: "1"}}[k.Type]
			}
		}
		return it
	}
	items := dynamotest.Items{}
	for _, table := range dynamo.Tables() {
		if table.PartitionKey.Type == "S" {
			items[table.Name] = []map[string]types.AttributeValue{item(table, "a", "1"), item(table, "b", "2")}
		}
	}
	var first, second dynamo.TableNames
	t.Run("first", func(t *testing.T) {
		var db *dynamodb.Client
		db, first = dynamotest.NewHolding(t, items)
		holds(t, db, first, items)
		// One item changed, one deleted and one added, in each table.
		for _, table := range dynamo.Tables() {
			its := items[table.Name]
			if len(its) == 0 {
				continue
			}
			name := aws.String(first.Physical(table.Name))
			changed := maps.Clone(its[0])
			changed["value"] = &types.AttributeValueMemberS{Value: "changed"}
			key := maps.Clone(its[1])
			delete(key, "value")
			for _, err := range []error{
				put(t.Context(), db, name, changed),
				put(t.Context(), db, name, item(table, "c", "3")),
				func() error {
					_, err := db.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: name, Key: key})
					return err
				}(),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	var db *dynamodb.Client
	t.Run("second", func(t *testing.T) { db, second = dynamotest.NewHolding(t, items) })
	if first == nil || second == nil {
		t.FailNow()
	}
	if !maps.Equal(first, second) {
		t.Fatalf("the second test has tables %v, want the first's, brought back to the items: a set of tables is reused", second)
	}
	holds(t, db, second, items)
}

func put(ctx context.Context, db *dynamodb.Client, name *string, item map[string]types.AttributeValue) error {
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: name, Item: item})
	return err
}

// holds checks that the tables names hold items and nothing else.
func holds(t *testing.T, db *dynamodb.Client, names dynamo.TableNames, items dynamotest.Items) {
	t.Helper()
	got, err := dynamotest.Read(t.Context(), db, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range dynamo.Tables() {
		want := items[table.Name]
		if len(got[table.Name]) != len(want) {
			t.Errorf("table %s holds %d items, want %d", table.Name, len(got[table.Name]), len(want))
			continue
		}
		for _, w := range want {
			found := false
			for _, g := range got[table.Name] {
				found = found || reflect.DeepEqual(g, w)
			}
			if !found {
				t.Errorf("table %s does not hold its item of value %q as it is", table.Name, w["value"].(*types.AttributeValueMemberS).Value)
			}
		}
	}
}
