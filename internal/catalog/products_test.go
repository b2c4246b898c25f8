package catalog_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// seeded returns the API on the demo catalog, with a customer's and an
// admin's clients.
func seeded(t *testing.T) (api *servicetest.API, customer, admin *servicetest.Client) {
	t.Helper()
	api = servicetest.New(t)
	api.SeedCatalog(t)
	return api, api.As(t, 2, quire.RoleCustomer), api.As(t, 1, quire.RoleAdmin)
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

type product struct {
	ID       int64       `json:"id"`
	Name     string      `json:"name"`
	Price    json.Number `json:"price"`
	Status   string      `json:"status"`
	AuthorID int64       `json:"author_id"`
	Links    []link      `json:"links"`
}

func ok[T any](t *testing.T, c *servicetest.Client, method, path, body string, header ...string) T {
	t.Helper()
	r := c.Do(t, method, path, body, header...)
	if r.StatusCode/100 != 2 {
		t.Fatalf("%s %s = %d %s", method, path, r.StatusCode, r.Body)
	}
	return servicetest.Decode[T](t, r)
}

// TestProductV1: the contract's example, to the byte.
func TestProductV1(t *testing.T) {
	_, c, _ := seeded(t)
	r := c.Do(t, "GET", "/api/v1/products/1", "", "Accept", "application/json")
	want := `{"id":1,"name":"Frankenstein","price":12.99,"status":"AVAILABLE","author_id":1,` +
		`"links":[{"rel":"buy","href":"/api/v1/products/1/buy"},{"rel":"author","href":"/api/v1/authors/1"}]}`
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Body != want {
		t.Errorf("GET /api/v1/products/1 = %d %s\n%s\nwant %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body, want)
	}
	// A discontinued book cannot be bought: no buy link.
	p := ok[product](t, c, "GET", "/products/4", "")
	if p.Status != "DISCONTINUED" || !cmp.Equal(p.Links, []link{{"author", "/authors/2"}}) {
		t.Errorf("discontinued product %+v", p)
	}
	servicetest.WantProblem(t, c.Do(t, "GET", "/products/999", ""), 404, quire.ENOTFOUND)
	servicetest.WantProblem(t, c.Do(t, "GET", "/products/abc", ""), 404, quire.ENOTFOUND)
}

func TestCatalogLists(t *testing.T) {
	api, c, _ := seeded(t)
	ids := func(path string, limit int) (out []int64, pages int) {
		next := fmt.Sprintf("%s?limit=%d", path, limit)
		linkRE := regexp.MustCompile(`^<https?://[^/]+([^>]+)>; rel="next"$`)
		for next != "" {
			r := c.Do(t, "GET", next, "")
			if r.StatusCode != 200 {
				t.Fatalf("GET %s = %d %s", next, r.StatusCode, r.Body)
			}
			var page []struct{ ID int64 }
			if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
				t.Fatal(err)
			}
			for _, p := range page {
				out = append(out, p.ID)
			}
			pages++
			next = ""
			if m := linkRE.FindStringSubmatch(r.Header.Get("Link")); m != nil {
				next = m[1]
			}
		}
		return out, pages
	}
	if got, pages := ids("/products", 2); !cmp.Equal(got, []int64{1, 2, 3, 4, 5}) || pages != 3 {
		t.Errorf("/products = %v in %d pages", got, pages)
	}
	if got, _ := ids("/authors", 2); !cmp.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("/authors = %v", got)
	}
	if got, _ := ids("/authors/2/books", 1); !cmp.Equal(got, []int64{3, 4}) {
		t.Errorf("/authors/2/books = %v", got)
	}
	a := ok[struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Links []link `json:"links"`
	}](t, c, "GET", "/authors/3", "")
	if a.Name != "Herman Melville" || !cmp.Equal(a.Links, []link{{"books", "/authors/3/books"}}) {
		t.Errorf("author %+v", a)
	}
	servicetest.WantProblem(t, c.Do(t, "GET", "/authors/999", ""), 404, quire.ENOTFOUND)
	servicetest.WantProblem(t, c.Do(t, "GET", "/authors/999/books", ""), 404, quire.ENOTFOUND)
	servicetest.WantProblem(t, c.Do(t, "GET", "/products?limit=0", ""), 400, quire.EINVALID)
	servicetest.WantProblem(t, c.Do(t, "GET", "/products?cursor=!!", ""), 400, quire.EINVALID)
	servicetest.WantProblem(t, api.Do(t, "GET", "/products", ""), 401, quire.EUNAUTHORIZED)
}

func TestAdminCatalog(t *testing.T) {
	_, c, a := seeded(t)
	servicetest.WantProblem(t, c.Do(t, "POST", "/admin/authors", `{"name":"Mallory"}`), 403, quire.EFORBIDDEN)
	servicetest.WantProblem(t, c.Do(t, "POST", "/admin/products", `{}`), 403, quire.EFORBIDDEN)

	r := a.Do(t, "POST", "/admin/authors", `{"name":"  Virginia Woolf "}`)
	if r.StatusCode != 201 {
		t.Fatalf("POST /admin/authors = %d %s", r.StatusCode, r.Body)
	}
	author := servicetest.Decode[struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Links []link `json:"links"`
	}](t, r)
	if author.Name != "Virginia Woolf" || !strings.HasSuffix(r.Header.Get("Location"), fmt.Sprintf("/authors/%d", author.ID)) {
		t.Errorf("created author %+v at %q", author, r.Header.Get("Location"))
	}

	body := fmt.Sprintf(`{"name":"Orlando","price":11.50,"status":"AVAILABLE","author_id":%d}`, author.ID)
	r = a.Do(t, "POST", "/admin/products", body)
	if r.StatusCode != 201 {
		t.Fatalf("POST /admin/products = %d %s", r.StatusCode, r.Body)
	}
	created := servicetest.Decode[product](t, r)
	if got := ok[product](t, c, "GET", fmt.Sprintf("/products/%d", created.ID), ""); !cmp.Equal(got, created) {
		t.Errorf("stored %+v, created %+v", got, created)
	}
	if got := ok[[]product](t, c, "GET", fmt.Sprintf("/authors/%d/books", author.ID), ""); len(got) != 1 || got[0].ID != created.ID {
		t.Errorf("the author's books: %+v", got)
	}

	before := ok[[]product](t, c, "GET", "/products?limit=100", "")
	for _, bad := range []struct {
		body     string
		pointers []string
	}{
		{`{"name":"X","price":1,"status":"AVAILABLE","author_id":999}`, []string{"/author_id"}},
		{`{"name":"","price":0,"status":"SOLD","author_id":0}`, []string{"/name", "/price", "/status", "/author_id"}},
		{`{"name":"X","price":10000.01,"status":"AVAILABLE","author_id":1}`, []string{"/price"}},
		{`{"name":"X","price":1,"status":"ARCHIVED","author_id":1}`, []string{"/status"}}, // not in v1
		{`{}`, []string{"/name", "/price", "/status", "/author_id"}},
	} {
		p := servicetest.WantProblem(t, a.Do(t, "POST", "/admin/products", bad.body), 400, quire.EINVALID)
		var got []string
		for _, f := range p.Errors {
			got = append(got, f.Pointer)
		}
		if !cmp.Equal(got, bad.pointers) {
			t.Errorf("POST %s: fields %v, want %v", bad.body, got, bad.pointers)
		}
	}
	for _, bad := range []string{`{"name":"X","price":1.001,"status":"AVAILABLE","author_id":1}`, `{"name":"X","price":"1","status":"AVAILABLE","author_id":1}`, `[]`} {
		servicetest.WantProblem(t, a.Do(t, "POST", "/admin/products", bad), 400, quire.EINVALID)
	}
	if after := ok[[]product](t, c, "GET", "/products?limit=100", ""); len(after) != len(before) {
		t.Errorf("refused creations stored products: %d, then %d", len(before), len(after))
	}

	// PUT replaces every field.
	path := fmt.Sprintf("/admin/products/%d", created.ID)
	got := ok[product](t, a, "PUT", path, `{"name":"Orlando: A Biography","price":12,"status":"DISCONTINUED","author_id":1}`)
	if got.Name != "Orlando: A Biography" || got.Price != "12.00" || got.Status != "DISCONTINUED" || got.AuthorID != 1 {
		t.Errorf("replaced %+v", got)
	}
	servicetest.WantProblem(t, a.Do(t, "PUT", "/admin/products/999", `{"name":"X","price":1,"status":"AVAILABLE","author_id":1}`), 404, quire.ENOTFOUND)
	servicetest.WantProblem(t, a.Do(t, "PUT", path, `{"name":"X","price":1,"status":"AVAILABLE","author_id":999}`), 400, quire.EINVALID)
	if stored := ok[product](t, c, "GET", fmt.Sprintf("/products/%d", created.ID), ""); stored.Name != "Orlando: A Biography" {
		t.Errorf("a refused PUT changed the product: %+v", stored)
	}
}

// TestArchiveIsInvisibleToV1: a product archived through v2 reads as
// DISCONTINUED in v1, everywhere, and a v1 client that writes back what it
// read does not unarchive it.
func TestArchiveIsInvisibleToV1(t *testing.T) {
	_, c, a := seeded(t)
	v1Before := ok[product](t, c, "GET", "/api/v1/products/1", "")

	archived := ok[product](t, a, "PUT", "/api/v2/admin/products/1", `{"name":"Frankenstein","price":12.99,"status":"ARCHIVED","author_id":1}`)
	if archived.Status != "ARCHIVED" || !cmp.Equal(archived.Links, []link{{"author", "/api/v2/authors/1"}}) {
		t.Errorf("v2 answer %+v", archived)
	}
	v2 := ok[product](t, c, "GET", "/products/1", "", "Accept", "application/vnd.quire.v2+json")
	if v2.Status != "ARCHIVED" {
		t.Errorf("v2 reads %s", v2.Status)
	}

	// v1 sees the same fields with a v1 status.
	v1 := ok[product](t, c, "GET", "/api/v1/products/1", "")
	want := v1Before
	want.Status, want.Links = "DISCONTINUED", []link{{"author", "/api/v1/authors/1"}}
	if diff := cmp.Diff(want, v1); diff != "" {
		t.Errorf("v1 after archiving (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/products/1", "/api/v1/products/1", "/products?limit=100", "/api/v1/products", "/authors/1/books", "/landing"} {
		r := c.Do(t, "GET", path, "")
		if r.StatusCode != 200 || strings.Contains(r.Body, "ARCHIVED") {
			t.Errorf("v1 GET %s = %d %s", path, r.StatusCode, r.Body)
		}
	}
	if r := c.Do(t, "GET", "/landing", ""); strings.Contains(r.Body, "Frankenstein") {
		t.Errorf("the landing page still features an archived book: %s", r.Body)
	}

	// A v1 admin writes back what it read: the product stays archived.
	back := ok[product](t, a, "PUT", "/api/v1/admin/products/1", `{"id":1,"name":"Frankenstein","price":13.50,"status":"DISCONTINUED","author_id":1,"links":[]}`)
	if back.Status != "DISCONTINUED" || back.Price != "13.50" {
		t.Errorf("v1 PUT answered %+v", back)
	}
	if v2 := ok[product](t, c, "GET", "/api/v2/products/1", ""); v2.Status != "ARCHIVED" || v2.Price != "13.50" {
		t.Errorf("after a v1 write-back, v2 reads %+v", v2)
	}
	// Making it available again is a v1 change like any other.
	if p := ok[product](t, a, "PUT", "/admin/products/1", `{"name":"Frankenstein","price":13.50,"status":"AVAILABLE","author_id":1}`); p.Status != "AVAILABLE" || len(p.Links) != 2 {
		t.Errorf("unarchived %+v", p)
	}
}
