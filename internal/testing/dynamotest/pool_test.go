package dynamotest

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/dynamo"
)

// Main deletes the tables of the pool when the tests end (drain).
func TestDrainDeletesEveryTableMade(t *testing.T) {
	endpoint := Endpoint(t)
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	var p pool
	names, err := p.take(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	p.put(names)
	p.drain(endpoint)
	var left []string
	for pages := dynamodb.NewListTablesPaginator(db, &dynamodb.ListTablesInput{}); pages.HasMorePages(); {
		page, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, page.TableNames...)
	}
	for _, name := range names {
		if slices.Contains(left, name) {
			t.Errorf("table %s outlived the pool", name)
		}
	}
}
