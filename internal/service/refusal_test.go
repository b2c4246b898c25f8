package service_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/servicetest"
	"github.com/quireapi/quire/internal/users"
)

// refusalShop is the demo shop for one refusal: its API, the admin, and
// Grace (id 2, a balance of 50.00, Pride and Prejudice and Moby-Dick in her
// cart, one order).
type refusalShop struct {
	api          *servicetest.API
	admin, grace *servicetest.Client
}

// newRefusalShop runs Quire with the demo data, on the store o says.
func newRefusalShop(t *testing.T, o servicetest.Option) refusalShop {
	t.Helper()
	api := servicetest.New(t, o, servicetest.Option{Demo: true})
	return refusalShop{api: api, admin: api.As(t, 1, quire.RoleAdmin), grace: api.As(t, 2, quire.RoleCustomer)}
}

// state is what a refused request must leave as it was: every user (with
// balance, status and email), Grace's account, cart and orders, and the
// outbox: a refusal publishes nothing.
func (s refusalShop) state(t *testing.T) string {
	t.Helper()
	var events []string
	for _, ev := range s.api.Events(t) {
		events = append(events, ev.ID+" "+ev.Type)
	}
	return strings.Join([]string{
		strings.Join(events, ","),
		s.admin.Expect(t, "GET", "/admin/users?limit=100", "", 200).Body,
		s.grace.Expect(t, "GET", "/users/2?embed=profile", "", 200).Body,
		s.grace.Expect(t, "GET", "/cart", "", 200).Body,
		s.grace.Expect(t, "GET", "/orders", "", 200).Body,
	}, "\n")
}

// TestRefusalsChangeNothing: each conflict with the current state that no
// retry fixes is a 409 with a problem type of its own, without Retry-After
// (a client that sees none does not retry), and changes nothing stored: on
// memory, and on DynamoDB Local.
func TestRefusalsChangeNothing(t *testing.T) { servicetest.On(t, testRefusals) }

func testRefusals(t *testing.T, on servicetest.Option) {
	closeGrace := func(t *testing.T, s refusalShop) { s.grace.Expect(t, "POST", "/users/2/close", "", 200) }
	for _, tc := range []struct {
		name               string
		setup              func(*testing.T, refusalShop)
		method, path, body string // sent by Grace, by the admin to a deposit, or with no token to POST /users
		code               string
	}{
		{"buy beyond the balance", nil, "POST", "/products/1/buy", `{"quantity":4}`, quire.EINSUFFICIENTFUNDS}, // 51.96 > 50.00
		{"pay beyond the balance", func(t *testing.T, s refusalShop) {
			s.grace.Expect(t, "POST", "/cart", `{"product_id":1,"quantity":2}`, 200) // 24.49 + 25.98 = 50.47
		}, "POST", "/pay", "", quire.EINSUFFICIENTFUNDS},
		{"deposit to a closed account", closeGrace, "POST", "/users/2/deposit", `{"amount":5}`, quire.EACCOUNTCLOSED},
		{"close a closed account", closeGrace, "POST", "/users/2/close", "", quire.EACCOUNTCLOSED},
		{"buy from a closed account", closeGrace, "POST", "/products/3/buy", `{"quantity":1}`, quire.EACCOUNTCLOSED},
		{"pay from a closed account", closeGrace, "POST", "/pay", "", quire.EACCOUNTCLOSED},
		{"deposit past the cap", func(t *testing.T, s refusalShop) {
			store := s.api.Stores.Users
			for balance := demo.CustomerBalance; balance+users.MaxDeposit <= users.MaxBalance; balance += users.MaxDeposit {
				if _, err := users.Fund(t.Context(), store, 2, users.MaxDeposit); err != nil {
					t.Fatal(err)
				}
			}
		}, "POST", "/users/2/deposit", `{"amount":10000}`, quire.EBALANCELIMIT},
		{"pay an empty cart", func(t *testing.T, s refusalShop) {
			s.grace.Expect(t, "DELETE", "/cart/items/3", "", 204)
			s.grace.Expect(t, "DELETE", "/cart/items/5", "", 204)
		}, "POST", "/pay", "", quire.ECARTEMPTY},
		{"add a discontinued book", nil, "POST", "/cart", `{"product_id":4,"quantity":1}`, quire.EPRODUCTUNAVAILABLE},
		{"buy a discontinued book", nil, "POST", "/products/4/buy", `{"quantity":1}`, quire.EPRODUCTUNAVAILABLE},
		{"pay for an archived book", func(t *testing.T, s refusalShop) {
			s.admin.Expect(t, "PUT", "/api/v2/admin/products/5", `{"name":"Moby-Dick","price":14.50,"status":"ARCHIVED","author_id":3}`, 200)
		}, "POST", "/pay", "", quire.EPRODUCTUNAVAILABLE},
		{"99 copies of a book", nil, "POST", "/cart", `{"product_id":3,"quantity":99}`, quire.ECARTFULL}, // 1 + 99 > 99
		{"51 books", func(t *testing.T, s refusalShop) {
			cs := s.api.Stores.Carts
			for i := range carts.MaxItems - 2 { // the cart holds 2
				p := catalog.Product{ID: quire.ID(100 + i), Name: fmt.Sprint("Book ", i), Price: 100, Status: catalog.StatusAvailable, AuthorID: 1, AuthorName: "Mary Shelley"}
				s.api.PutProduct(t, p, 0)
				if err := carts.AddTo(t.Context(), cs, 2, p.ID, 1, map[quire.ID]catalog.Product{p.ID: p}); err != nil {
					t.Fatal(err)
				}
			}
		}, "POST", "/cart", `{"product_id":1,"quantity":1}`, quire.ECARTFULL},
		{"sign up with a taken email", nil, "POST", "/users",
			`{"email":"GRACE@quire.example","first_name":"G","last_name":"H","password":"correct horse"}`, quire.EEMAILTAKEN},
		{"take another user's email", nil, "PUT", "/users/2",
			`{"email":"alan@quire.example","first_name":"Grace","last_name":"Hopper","current_password":"` + demo.CustomerPassword + `"}`, quire.EEMAILTAKEN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newRefusalShop(t, on)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			before := s.state(t)
			// Every POST takes an idempotency key (and POST /pay needs
			// one): a refusal is checked against the key's record again.
			var header []string
			if tc.method == "POST" {
				header = []string{"Idempotency-Key", "refusal-" + strings.ReplaceAll(tc.name, " ", "-")}
			}
			var r servicetest.Response
			switch {
			case tc.path == "/users":
				r = s.api.Do(t, tc.method, tc.path, tc.body, header...)
			case strings.HasSuffix(tc.path, "/deposit"): // money comes from the back office
				r = s.admin.Do(t, tc.method, tc.path, tc.body, header...)
			default:
				r = s.grace.Do(t, tc.method, tc.path, tc.body, header...)
			}
			var p rest.Problem
			if r.StatusCode != 409 || json.Unmarshal([]byte(r.Body), &p) != nil || p.Type != rest.ProblemType(tc.code) || p.Status != 409 {
				t.Errorf("%s %s = %d %s; want 409 of type %s", tc.method, tc.path, r.StatusCode, r.Body, rest.ProblemType(tc.code))
			}
			if ra := r.Header.Get("Retry-After"); ra != "" {
				t.Errorf("a refusal with Retry-After %q", ra)
			}
			if after := s.state(t); after != before {
				t.Errorf("the refusal changed what is stored:\n%s\nthen\n%s", before, after)
			}
		})
	}
}
