package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestCatalogReadsAreCachedPerFunction: with an instance cache, as
// deployed, every shared catalog read answered again makes no DynamoDB
// request, in the catalog function and in carts; an admin's write through
// the catalog function is read there at once, while carts, another
// function with a cache of its own, shows the old price until its
// staleness passes (an hour here, so that no test waits it out; a second
// as deployed: see internal/dynamo's tests of the staleness).
func TestCatalogReadsAreCachedPerFunction(t *testing.T) {
	counter := &dynamotest.Counter{}
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Config: func(c *service.Config) {
		c.CatalogStaleness = time.Hour
		c.DynamoDBOptions = append(c.DynamoDBOptions, counter.Option)
	}})
	api.SeedCatalog(t)
	customer, admin := api.As(t, 2, quire.RoleCustomer), api.As(t, 1, quire.RoleAdmin)
	twice := func(method, path, body string) (cold, warm servicetest.Response) {
		t.Helper()
		cold = customer.Expect(t, method, path, body, 200)
		coldOps, _ := counter.Take()
		warm = customer.Expect(t, method, path, body, 200)
		warmOps, _ := counter.Take()
		t.Logf("%s %s: cold %v, warm %v", method, path, coldOps, warmOps)
		if len(warmOps) != 0 {
			t.Errorf("%s %s again: DynamoDB requests %v, want none", method, path, warmOps)
		}
		if cold.Body != warm.Body || cold.Header.Get("ETag") != warm.Header.Get("ETag") {
			t.Errorf("%s %s again: %s %s, want %s %s", method, path, warm.Header.Get("ETag"), warm.Body, cold.Header.Get("ETag"), cold.Body)
		}
		return cold, warm
	}
	for _, path := range []string{"/landing", "/authors?limit=2", "/authors/1", "/authors/2/books", "/products?limit=2", "/products/1", "/products/2"} {
		twice("GET", path, "")
	}

	customer.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":1}`, 200)
	counter.Take()
	cart := customer.Expect(t, "GET", "/cart", "", 200)
	if ops, _ := counter.Take(); len(ops) != 1 || ops[0] != "GetItem" {
		t.Errorf("GET /cart after POST /cart: DynamoDB requests %v, want the cart's GetItem only", ops)
	}
	if !strings.Contains(cart.Body, `"price":12.99`) {
		t.Fatalf("cart %s, want book 1 at 12.99", cart.Body)
	}

	put := admin.Expect(t, "PUT", "/admin/products/1", `{"name":"Frankenstein","price":20.00,"status":"AVAILABLE","author_id":1}`, 200)
	got := customer.Expect(t, "GET", "/products/1", "", 200)
	if !strings.Contains(got.Body, `"price":20.00`) || got.Header.Get("ETag") != put.Header.Get("ETag") {
		t.Errorf("GET /products/1 after the admin's PUT, same function: %s %s, want the PUT's %s at 20.00", got.Header.Get("ETag"), got.Body, put.Header.Get("ETag"))
	}
	if got := customer.Expect(t, "GET", "/landing", "", 200); !strings.Contains(got.Body, `"price":20.00`) {
		t.Errorf("GET /landing after the admin's PUT, same function: %s, want book 1 at 20.00", got.Body)
	}
	if got := customer.Expect(t, "GET", "/cart", "", 200); got.Body != cart.Body {
		t.Errorf("GET /cart within the carts function's staleness: %s, want the cached %s", got.Body, cart.Body)
	}
}
