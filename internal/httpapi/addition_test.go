package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/quire"
)

// FuzzAddition: what check accepts names a product and a whole quantity
// within the bounds, each written as an integer.
func FuzzAddition(f *testing.F) {
	f.Add(`{"product_id":1,"quantity":2}`)
	f.Add(`{"product_id":0,"quantity":100}`)
	f.Add(`{"product_id":9007199254740992,"quantity":1}`)
	f.Add(`{"product_id":1,"quantity":1.5}`)
	f.Add(`{"product_id":1,"quantity":99.0000001}`)
	f.Add(`{"product_id":1,"quantity":2.0000000000000001}`)
	f.Add(`{"product_id":1e1,"quantity":1e1}`)
	f.Fuzz(func(t *testing.T, body string) {
		var a Addition
		if json.Unmarshal([]byte(body), &a) != nil || a.check() != nil {
			return
		}
		if q := *a.Quantity; *a.ProductID < 1 || *a.ProductID > quire.MaxID || q < 1 || q > carts.MaxQuantity {
			t.Fatalf("%s accepted as %d x %v", body, *a.ProductID, q)
		}
		var raw struct{ ProductID, Quantity json.Number }
		if json.Unmarshal([]byte(body), &raw) != nil || strings.ContainsAny(string(raw.ProductID)+string(raw.Quantity), ".eE") {
			t.Fatalf("%s accepted, its numbers not written as integers", body)
		}
	})
}
