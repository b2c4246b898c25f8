package carts_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

type line struct {
	ProductID int64       `json:"product_id"`
	Name      string      `json:"name"`
	Price     json.Number `json:"price"`
	Status    string      `json:"status"`
	Quantity  int         `json:"quantity"`
	Subtotal  json.Number `json:"subtotal"`
	Links     []struct{ Rel, Href string }
}

type cart struct {
	Items []line      `json:"items"`
	Total json.Number `json:"total"`
}

func seeded(t *testing.T, opts ...servicetest.Option) (*servicetest.API, *servicetest.Client) {
	t.Helper()
	api := servicetest.New(t, opts...)
	api.SeedCatalog(t)
	return api, api.As(t, 2, quire.RoleCustomer)
}

func getCart(t *testing.T, c *servicetest.Client) cart {
	t.Helper()
	var v cart
	dec := json.NewDecoder(strings.NewReader(c.Expect(t, "GET", "/cart", "", 200).Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// quantities returns product id -> quantity of a cart.
func quantities(c cart) map[int64]int {
	out := map[int64]int{}
	for _, l := range c.Items {
		out[l.ProductID] = l.Quantity
	}
	return out
}

func TestCart(t *testing.T) {
	api, c := seeded(t)
	if r := c.Expect(t, "GET", "/cart", "", 200); r.Body != `{"items":[],"total":0.00}` {
		t.Errorf("empty cart %s", r.Body)
	}
	c.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":2}`, 200)
	r := c.Expect(t, "POST", "/cart", `{"product_id":3,"quantity":1}`, 200)
	want := `{"items":[` +
		`{"product_id":1,"name":"Frankenstein","price":12.99,"status":"AVAILABLE","quantity":2,"subtotal":25.98,"links":[{"rel":"product","href":"/products/1"}]},` +
		`{"product_id":3,"name":"Pride and Prejudice","price":9.99,"status":"AVAILABLE","quantity":1,"subtotal":9.99,"links":[{"rel":"product","href":"/products/3"}]}` +
		`],"total":35.97}`
	if r.Body != want {
		t.Errorf("cart\n%s\nwant\n%s", r.Body, want)
	}
	c.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":1}`, 200)
	if got := quantities(getCart(t, c)); !cmp.Equal(got, map[int64]int{1: 3, 3: 1}) {
		t.Errorf("after adding again: %v", got)
	}

	// Refusals change nothing.
	c.Expect(t, "POST", "/cart", `{"product_id":999,"quantity":1}`, 404)
	c.ExpectProblem(t, "POST", "/cart", `{"product_id":4,"quantity":1}`, 409, quire.EPRODUCTUNAVAILABLE) // discontinued
	for _, bad := range []string{`{"product_id":1,"quantity":0}`, `{"product_id":1,"quantity":100}`, `{"product_id":1,"quantity":"2"}`,
		`{"product_id":1}`, `{"quantity":1}`, `{"product_id":-1,"quantity":1}`, `{"product_id":1.5,"quantity":1}`, `{"product_id":1,"quantity":1,"note":"x"}`} {
		c.Expect(t, "POST", "/cart", bad, 400)
	}
	// What a strict reading of the body tells the client: the field, and
	// what is wrong with it.
	for body, want := range map[string]quire.FieldError{
		`{"product_id":1,"quantity":1.5}`:                  {Pointer: "/quantity", Detail: rest.WholeNumber},
		`{"product_id":1,"quantity":2.0}`:                  {Pointer: "/quantity", Detail: rest.WholeNumber},
		`{"product_id":1,"quantity":1e1}`:                  {Pointer: "/quantity", Detail: rest.WholeNumber},
		`{"product_id":1.0,"quantity":1}`:                  {Pointer: "/product_id", Detail: rest.WholeNumber},
		`{"product_id":1,"quantity":1,"quantity":99}`:      {Pointer: "/quantity", Detail: "appears twice in its object"},
		"{\"product_id\":1,\"quantity\":1,\"x\":\"\xff\"}": {Pointer: "/x", Detail: "is not valid UTF-8"},
	} {
		p := c.ExpectProblem(t, "POST", "/cart", body, 400, quire.EINVALID)
		if len(p.Errors) != 1 || p.Errors[0] != want {
			t.Errorf("POST /cart %q: errors %+v, want %+v", body, p.Errors, want)
		}
	}
	c.ExpectProblem(t, "POST", "/cart", `{"product_id":1,"quantity":97}`, 409, quire.ECARTFULL) // 3 + 97 > 99
	if got := quantities(getCart(t, c)); !cmp.Equal(got, map[int64]int{1: 3, 3: 1}) {
		t.Errorf("after refused additions: %v", got)
	}

	// Each user has their own cart.
	other := api.As(t, 3, quire.RoleCustomer)
	if got := getCart(t, other); len(got.Items) != 0 {
		t.Errorf("another user's cart: %+v", got)
	}
	other.Expect(t, "DELETE", "/cart/items/1", "", 404)

	c.Expect(t, "DELETE", "/cart/items/1", "", 204)
	c.Expect(t, "DELETE", "/cart/items/1", "", 404)
	c.Expect(t, "DELETE", "/cart/items/abc", "", 404)
	if got := quantities(getCart(t, c)); !cmp.Equal(got, map[int64]int{3: 1}) {
		t.Errorf("after removing: %v", got)
	}
}

// TestArchivedProductInCart: a v1 client sees an archived book of its cart
// as DISCONTINUED, and cannot add more of it.
func TestArchivedProductInCart(t *testing.T) {
	api, c := seeded(t)
	c.Expect(t, "POST", "/cart", `{"product_id":5,"quantity":1}`, 200)
	api.As(t, 1, quire.RoleAdmin).Expect(t, "PUT", "/api/v2/admin/products/5", `{"name":"Moby-Dick","price":14.50,"status":"ARCHIVED","author_id":3}`, 200)
	if got := getCart(t, c); got.Items[0].Status != "DISCONTINUED" {
		t.Errorf("v1 cart shows %s", got.Items[0].Status)
	}
	if r := c.Do(t, "GET", "/api/v2/cart", ""); !strings.Contains(r.Body, `"ARCHIVED"`) {
		t.Errorf("v2 cart %s", r.Body)
	}
	c.ExpectProblem(t, "POST", "/cart", `{"product_id":5,"quantity":1}`, 409, quire.EPRODUCTUNAVAILABLE)
}

// TestConcurrentAdditions: additions that race on one cart, new and
// existing, all land, though their transactions conflict as they do on
// DynamoDB.
func TestConcurrentAdditions(t *testing.T) {
	p, conflicts := servicetest.Conflicts(t)
	_, c := seeded(t, conflicts)
	defer func() { t.Logf("%d transaction conflicts", p.Injected()[ddbfault.Conflict]) }()
	var wg sync.WaitGroup
	products := []int{1, 2, 3, 5}
	const each = 6
	for i := range len(products) * each {
		wg.Go(func() {
			body := fmt.Sprintf(`{"product_id":%d,"quantity":1}`, products[i%len(products)])
			if r := c.Do(t, "POST", "/cart", body); r.StatusCode != 200 {
				t.Errorf("POST /cart %s = %d %s", body, r.StatusCode, r.Body)
			}
		})
	}
	wg.Wait()
	want := map[int64]int{1: each, 2: each, 3: each, 5: each}
	if got := quantities(getCart(t, c)); !cmp.Equal(got, want) {
		t.Errorf("after %d concurrent additions: %v, want %v", len(products)*each, got, want)
	}
}

func TestCartFull(t *testing.T) {
	api, c := seeded(t)
	for i := range 50 {
		p := catalog.Product{ID: quire.ID(100 + i), Name: fmt.Sprint("Book ", i), Price: 100, Status: catalog.StatusAvailable, AuthorID: 1, AuthorName: "Mary Shelley"}
		api.PutProduct(t, p, 0)
		c.Expect(t, "POST", "/cart", fmt.Sprintf(`{"product_id":%d,"quantity":1}`, p.ID), 200)
	}
	c.ExpectProblem(t, "POST", "/cart", `{"product_id":1,"quantity":1}`, 409, quire.ECARTFULL)
	c.Expect(t, "POST", "/cart", `{"product_id":100,"quantity":1}`, 200) // more of a book it has
	if got := getCart(t, c); len(got.Items) != 50 || got.Total != "51.00" {
		t.Errorf("full cart: %d items, total %s", len(got.Items), got.Total)
	}
}
