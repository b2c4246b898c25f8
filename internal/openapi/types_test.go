package openapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/quireapi/quire/internal/routes"
)

// TestExactTypes: what a client generator reads from each document is
// exact. Every integer is a 64-bit one (format int64: ids reach 2^53-1,
// which a Java or C# generator reads as 32 bits without it), every number
// an amount, format double (a Go generator's float32 rounds 999999.99 to
// 1000000), and every enum and const says its type (without it, a Go
// client's field is an interface{}, whose zero value sends null).
func TestExactTypes(t *testing.T) {
	for _, v := range routes.Versions {
		b, err := Document(v)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(where string, node any)
		walk = func(where string, node any) {
			switch n := node.(type) {
			case map[string]any:
				typ, _ := n["type"].(string)
				_, enum := n["enum"].([]any)
				_, constant := n["const"]
				switch {
				case typ == "integer" && n["format"] != "int64":
					t.Errorf("version %d: %s is an integer of format %v, want int64", v, where, n["format"])
				case typ == "number" && n["format"] != "double":
					t.Errorf("version %d: %s is a number of format %v, want double", v, where, n["format"])
				case (enum || constant) && typ == "":
					t.Errorf("version %d: %s has values and no type", v, where)
				}
				for k, e := range n {
					walk(where+"/"+k, e)
				}
			case []any:
				for i, e := range n {
					walk(fmt.Sprintf("%s/%d", where, i), e)
				}
			}
		}
		walk("#", doc)
	}
}
