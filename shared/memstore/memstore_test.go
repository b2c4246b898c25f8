package memstore_test

import (
	"testing"

	"github.com/quireapi/quire/shared/memstore"
	"github.com/quireapi/quire/shared/storetest"
)

// TestStores holds the in-memory stores to the behaviour the DynamoDB
// stores show (see package storetest).
func TestStores(t *testing.T) {
	storetest.Run(t, func(testing.TB) storetest.Stores { return stores(memstore.New(0)) })
}

// stores returns db's stores as the suite takes them.
func stores(db *memstore.DB) storetest.Stores {
	return storetest.Stores{
		Users: db.Users(), Sessions: db.Sessions(), Catalog: db.Catalog(), Carts: db.Carts(),
		Orders: db.Orders(), Config: db.Config(), Records: db.Records(), Events: db,
	}
}
