package dynamotest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/dynamo/dynamotest"
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

func TestNewTablesArePerTestAndDeletedAfter(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	var first, second dynamo.TableNames
	t.Run("first", func(t *testing.T) { _, first = dynamotest.New(t) })
	t.Run("second", func(t *testing.T) { _, second = dynamotest.New(t) })
	if first == nil || second == nil {
		t.FailNow()
	}
	for logical, name := range first {
		if second[logical] == name {
			t.Errorf("two tests share table %s", name)
		}
	}

	db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.ListTables(t.Context(), &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range []dynamo.TableNames{first, second} {
		for _, name := range names {
			if slices.Contains(out.TableNames, name) {
				t.Errorf("table %s outlived its test", name)
			}
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
