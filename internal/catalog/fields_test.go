package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzProductFields: any body either fails validation or gives a product
// within the bounds, whose status its version may set.
func FuzzProductFields(f *testing.F) {
	f.Add(`{"name":"Emma","price":8.75,"status":"AVAILABLE","author_id":2}`, 1)
	f.Add(`{"name":" ","price":0,"status":"ARCHIVED","author_id":-1}`, 2)
	f.Add(`{"name":"x","price":10000.00,"status":"ARCHIVED","author_id":9007199254740991}`, 1)
	f.Fuzz(func(t *testing.T, body string, v int) {
		var pf ProductFields
		if json.Unmarshal([]byte(body), &pf) != nil {
			return
		}
		p, err := pf.Product(v)
		if err != nil {
			return
		}
		if p.Name == "" || p.Name != strings.TrimSpace(p.Name) || utf8.RuneCountInString(p.Name) > MaxNameLen ||
			p.Price < 1 || p.Price > MaxPrice || p.AuthorID < 1 || !p.Status.validIn(v) || (v < 2 && p.Status == StatusArchived) {
			t.Fatalf("%s (v%d) gave %+v", body, v, p)
		}
	})
}

func TestStatusIn(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		v    int
		want Status
	}{
		{StatusArchived, 1, StatusDiscontinued},
		{StatusArchived, 2, StatusArchived},
		{StatusAvailable, 1, StatusAvailable},
		{StatusDiscontinued, 2, StatusDiscontinued},
	} {
		if got := tc.s.In(tc.v); got != tc.want {
			t.Errorf("%s.In(%d) = %s, want %s", tc.s, tc.v, got, tc.want)
		}
	}
}
