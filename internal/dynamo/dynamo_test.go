package dynamo_test

import (
	"testing"

	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/storetest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestStores holds the DynamoDB stores, on DynamoDB Local, to the
// behaviour the domain packages rely on (see package storetest), which the
// in-memory stores show too.
func TestStores(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole suite, not each case, without DynamoDB
	storetest.Run(t, func(tb testing.TB) storetest.Stores { return storetest.DynamoDB(dynamotest.New(tb)) })
}
