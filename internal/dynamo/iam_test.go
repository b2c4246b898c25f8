package dynamo_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
)

// TestAccesses: what IAM authorizes for each kind of call, as AWS reads
// it: a transaction's items each as its single-item action, a batch on
// every table it names, a Query of an index on the index.
func TestAccesses(t *testing.T) {
	users, carts := aws.String("users"), aws.String("carts")
	for _, c := range []struct {
		op   string
		in   any
		want []dynamo.Access
	}{
		{"GetItem", &dynamodb.GetItemInput{TableName: users}, []dynamo.Access{{"dynamodb:GetItem", "users", ""}}},
		{"Query", &dynamodb.QueryInput{TableName: users, IndexName: aws.String("byRole")}, []dynamo.Access{{"dynamodb:Query", "users", "byRole"}}},
		{"BatchGetItem", &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"users": {}}},
			[]dynamo.Access{{"dynamodb:BatchGetItem", "users", ""}}},
		{"TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{ConditionCheck: &types.ConditionCheck{TableName: users}},
			{Put: &types.Put{TableName: carts}},
			{Update: &types.Update{TableName: users}},
			{Delete: &types.Delete{TableName: carts}},
		}}, []dynamo.Access{
			{"dynamodb:ConditionCheckItem", "users", ""}, {"dynamodb:PutItem", "carts", ""},
			{"dynamodb:UpdateItem", "users", ""}, {"dynamodb:DeleteItem", "carts", ""},
		}},
		{"TransactGetItems", &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: carts}}}},
			[]dynamo.Access{{"dynamodb:GetItem", "carts", ""}}},
		{"DescribeTable", &dynamodb.DescribeTableInput{TableName: users}, []dynamo.Access{{"dynamodb:DescribeTable", "*", ""}}},
	} {
		if diff := cmp.Diff(c.want, dynamo.Accesses(c.op, c.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.op, diff)
		}
	}
}

// TestEnforce: a client held to a role refuses what the role does not
// allow as AWS refuses it, HTTP 400 AccessDeniedException naming the
// action and the resource, without reaching DynamoDB, whatever table or
// index it names; and sends what the role allows.
func TestEnforce(t *testing.T) {
	g := routes.Group{Name: "readers", Grants: []routes.Grant{
		{Table: routes.TableUsers, Actions: []string{"dynamodb:GetItem"}},
		{Table: routes.TableCatalog, QueryIndexes: true},
	}}
	tables := dynamo.TableNames{routes.TableUsers: "quire-users", routes.TableCatalog: "quire-catalog"}
	var reached atomic.Int32 // calls that reached the endpoint, which answers none
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: srv.URL, Tables: tables}, dynamo.Enforce(g, tables, nil))
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}
	for _, c := range []struct {
		name     string
		call     func() error
		resource string // "" when allowed
		action   string
	}{
		{"a PutItem where GetItem alone is granted", func() error {
			_, err := db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String("quire-users"), Item: key})
			return err
		}, "table/quire-users", "dynamodb:PutItem"},
		{"a BatchGetItem where GetItem alone is granted", func() error {
			_, err := db.BatchGetItem(t.Context(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"quire-users": {Keys: []map[string]types.AttributeValue{key}}}})
			return err
		}, "table/quire-users", "dynamodb:BatchGetItem"},
		{"a transaction with one item not granted", func() error {
			_, err := db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String("quire-users"), Key: key, ConditionExpression: aws.String("attribute_exists(pk)")}},
			}})
			return err
		}, "table/quire-users", "dynamodb:ConditionCheckItem"},
		{"a table of no grant", func() error {
			_, err := db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("quire-carts"), Key: key})
			return err
		}, "table/quire-carts", "dynamodb:GetItem"},
		{"a Query of a table whose grant is to Query its indexes", func() error {
			_, err := db.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String("quire-catalog"),
				KeyConditionExpression: aws.String("pk = :pk"), ExpressionAttributeValues: map[string]types.AttributeValue{":pk": key["pk"]}})
			return err
		}, "table/quire-catalog", "dynamodb:Query"},
		{"a Scan of an index its grant lets it Query", func() error {
			_, err := db.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String("quire-catalog"), IndexName: aws.String("byAuthor")})
			return err
		}, "table/quire-catalog/index/byAuthor", "dynamodb:Scan"},
		{"a Query of an index its grant lets it Query", func() error {
			_, err := db.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String("quire-catalog"), IndexName: aws.String("byAuthor"),
				KeyConditionExpression: aws.String("pk = :pk"), ExpressionAttributeValues: map[string]types.AttributeValue{":pk": key["pk"]}})
			return err
		}, "", ""},
	} {
		before := reached.Load()
		err := c.call()
		if sent := reached.Load() > before; sent != (c.resource == "") {
			t.Errorf("%s: reached DynamoDB %v, want %v", c.name, sent, c.resource == "")
		}
		var api smithy.APIError
		var resp *smithyhttp.ResponseError
		denied := errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException"
		if c.resource == "" {
			if denied {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if !denied || !errors.As(err, &resp) || resp.HTTPStatusCode() != 400 {
			t.Errorf("%s: %v, want HTTP 400 AccessDeniedException", c.name, err)
			continue
		}
		want := "User: arn:aws:sts::000000000000:assumed-role/quire-readers/quire-readers is not authorized to perform: " + c.action +
			" on resource: arn:aws:dynamodb:us-east-1:000000000000:" + c.resource + " because no identity-based policy allows the " + c.action + " action"
		if api.ErrorMessage() != want {
			t.Errorf("%s: message\n%s\nwant\n%s", c.name, api.ErrorMessage(), want)
		}
	}
}
