package memstore_test

import (
	"testing"

	"github.com/quireapi/quire/internal/testing/memstore"
	"github.com/quireapi/quire/internal/testing/storetest"
)

// TestStores holds the in-memory stores to the behaviour the DynamoDB
// stores show (see package storetest).
func TestStores(t *testing.T) {
	storetest.Run(t, func(testing.TB) storetest.Stores { return storetest.Memory(memstore.New(0)) })
}
