package orders_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// Orders so large that a page's Query passes DynamoDB's 1 MB, where one
// Query call stops short: every order is listed once, in order, every page
// but the last is full, and a page has a next link exactly while orders
// remain.
func TestOrderPagesPastOneMegabyte(t *testing.T) {
	counter := &dynamotest.Counter{}
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Config: func(cfg *service.Config) {
		cfg.DynamoDBOptions = append(cfg.DynamoDBOptions, counter.Option)
	}})
	const buyer = 7
	store := dynamo.NewOrderStore(api.DB, api.Tables)
	created := time.Now().UTC().Truncate(time.Millisecond)
	var want []int64
	for i := range 60 {
		// Orders as large as they come, of about 40 KB: carts.MaxItems
		// books, each named with catalog.MaxNameLen characters of 4 bytes.
		// 26 in a row pass 1 MB.
		name := strings.Repeat(string(rune(0x1d400+i)), catalog.MaxNameLen)
		o := orders.Order{ID: quire.ID(1000 + i), UserID: buyer, CreatedAt: created, Total: 1000 * carts.MaxItems}
		for j := range carts.MaxItems {
			o.Items = append(o.Items, orders.Item{ProductID: quire.ID(1 + j), Name: name, Price: 1000, Quantity: 1, Subtotal: 1000})
		}
		if err := store.PutOrder(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		want = append(want, int64(o.ID))
	}
	c := api.As(t, buyer, quire.RoleCustomer)
	for _, limit := range []int{7, 25, 40, rest.MaxLimit} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			counter.Take()
			var got []int64
			pages := 0
			next := fmt.Sprintf("/orders?limit=%d", limit)
			for next != "" {
				r := c.Expect(t, "GET", next, "", 200)
				pages++
				var page []struct{ ID int64 }
				if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
					t.Fatalf("GET %s: %v", next, err)
				}
				for _, o := range page {
					got = append(got, o.ID)
				}
				next = ""
				if l := r.Header.Get("Link"); l != "" {
					next = l[strings.Index(l, "/orders"):strings.Index(l, ">")]
				}
				if more := len(got) < len(want); (next != "") != more || more && len(page) != limit {
					t.Fatalf("page %d: %d orders, next link %q, with %d of %d listed", pages, len(page), next, len(got), len(want))
				}
			}
			if !cmp.Equal(got, want) {
				t.Errorf("orders by pages of %d: %v, want %v", limit, got, want)
			}
			ops, _ := counter.Take()
			queries := strings.Count(strings.Join(ops, ","), "Query")
			t.Logf("%d pages, %d Query calls", pages, queries)
			// A page of 25 or more reads 26 orders, which pass 1 MB.
			if limit >= 25 && queries <= pages {
				t.Errorf("%d Query calls for %d pages of %d: no Query stopped at 1 MB, so this test proves nothing", queries, pages, limit)
			}
		})
	}
}
