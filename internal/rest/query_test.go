package rest

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
)

// Param reads a parameter sent once, and refuses, naming it, one sent
// twice or not percent-encoded; other parameters are no concern of it.
func TestParam(t *testing.T) {
	type result struct {
		Value  string
		OK     bool
		Fields []string
	}
	for _, tc := range []struct {
		query string
		want  result
	}{
		{"", result{}},
		{"embed=profile", result{"profile", true, nil}},
		{"embed", result{"", true, nil}},
		{"embed=", result{"", true, nil}},
		{"emb%65d=a%20b+c", result{"a b c", true, nil}},
		{"other=1&embed=profile&other=2", result{"profile", true, nil}},
		{"other=%%%&embed=profile", result{"profile", true, nil}},
		{"embedded=profile", result{}},
		{"embed=profile&embed=x", result{"", true, []string{"/embed"}}},
		{"embed=profile&embed=profile", result{"", true, []string{"/embed"}}},
		{"embed=profile&emb%65d=profile", result{"", true, []string{"/embed"}}},
		{"embed=%%%", result{"", true, []string{"/embed"}}},
		{"embed=%zz", result{"", true, []string{"/embed"}}},
	} {
		r := httptest.NewRequest("GET", "/users", nil)
		r.URL.RawQuery = tc.query
		v, ok, err := Param(r, "embed")
		got := result{v, ok, nil}
		if err != nil {
			got.Fields = fieldsOf(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Param(%q) (-want +got):\n%s", tc.query, diff)
		}
	}
}

// FuzzParam: a parameter is read exactly when the query holds it once, with
// the value net/url reads; otherwise it is refused, naming it, or absent.
func FuzzParam(f *testing.F) {
	for _, q := range []string{"", "limit=5", "limit=1&limit=2", "limit=%%%", "lim%69t=3", "a=1;limit=2", "limit"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/users", nil)
		r.URL.RawQuery = query
		v, ok, err := Param(r, "limit")
		if err != nil {
			e := err.(*quire.Error)
			if !ok || e.Code != quire.EINVALID || len(e.Fields) != 1 || e.Fields[0].Pointer != "/limit" {
				t.Fatalf("Param(%q): %v, %+v", query, ok, e)
			}
			return
		}
		q, perr := url.ParseQuery(query)
		if perr == nil && (ok != q.Has("limit") || len(q["limit"]) > 1 || v != q.Get("limit")) {
			t.Fatalf("Param(%q) = %q, %v; net/url reads %q", query, v, ok, q["limit"])
		}
	})
}
