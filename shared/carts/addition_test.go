package carts

import (
	"encoding/json"
	"testing"

	"github.com/quireapi/quire/shared/quire"
)

// FuzzAddition: what check accepts names a product and a quantity within
// the bounds.
func FuzzAddition(f *testing.F) {
	f.Add(`{"product_id":1,"quantity":2}`)
	f.Add(`{"product_id":0,"quantity":100}`)
	f.Add(`{"product_id":9007199254740992,"quantity":1}`)
	f.Fuzz(func(t *testing.T, body string) {
		var a Addition
		if json.Unmarshal([]byte(body), &a) != nil || a.check() != nil {
			return
		}
		if *a.ProductID < 1 || *a.ProductID > quire.MaxID || *a.Quantity < 1 || *a.Quantity > MaxQuantity {
			t.Fatalf("%s accepted as %d x %d", body, *a.ProductID, *a.Quantity)
		}
	})
}
