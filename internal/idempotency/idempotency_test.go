package idempotency_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// shop is Quire on the demo data: Grace (id 2) has 50.00, a cart of two
// books (24.49) and one order; Alan (id 3) has 50.00.
func shop(t *testing.T, opts ...servicetest.Option) (*servicetest.API, *servicetest.Client) {
	t.Helper()
	api := servicetest.New(t, append(opts, servicetest.Option{Demo: true})...)
	return api, api.As(t, 2, quire.RoleCustomer)
}

var n atomic.Int64

func newKey() string { return fmt.Sprintf("key-%d", n.Add(1)) }

func state(t *testing.T, c *servicetest.Client) string {
	t.Helper()
	var u struct{ Balance json.Number }
	dec := json.NewDecoder(strings.NewReader(c.Do(t, "GET", "/users/2", "").Body))
	dec.UseNumber()
	if err := dec.Decode(&u); err != nil {
		t.Fatal(err)
	}
	var orders []any
	if err := json.Unmarshal([]byte(c.Do(t, "GET", "/orders?limit=100", "").Body), &orders); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("balance %s, %d orders, cart %s", u.Balance, len(orders), c.Do(t, "GET", "/cart", "").Body)
}

// TestEveryPOSTReplays: each POST that takes a key runs once; the same
// request again gets the first answer byte for byte, marked as replayed.
func TestEveryPOSTReplays(t *testing.T) {
	api, c := shop(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	cases := map[string]struct {
		client *servicetest.Client
		path   string
		body   string
	}{
		"POST /users":              {nil, "/users", `{"email":"new@example.com","first_name":"N","last_name":"U","password":"correct horse"}`},
		"POST /users/{id}/deposit": {admin, "/users/2/deposit", `{"amount": 5}`},
		"POST /users/{id}/close":   {api.As(t, 3, quire.RoleCustomer), "/users/3/close", ""},
		"POST /admin/authors":      {admin, "/admin/authors", `{"name":"Virginia Woolf"}`},
		"POST /admin/products":     {admin, "/admin/products", `{"name":"Mathilda","price":8.50,"status":"AVAILABLE","author_id":1}`},
		"POST /cart":               {c, "/cart", `{"product_id":1,"quantity":1}`},
		"POST /products/{id}/buy":  {c, "/products/1/buy", `{"quantity":1}`},
		"POST /pay":                {c, "/pay", ""},
	}
	for _, r := range routes.All() {
		if r.Idempotency != routes.KeyNone && r.Version == 0 {
			if _, ok := cases[r.Key()]; !ok {
				t.Errorf("%s takes a key and has no case here", r.Key())
			}
		}
	}
	for _, name := range []string{"POST /users", "POST /users/{id}/deposit", "POST /users/{id}/close", "POST /admin/authors",
		"POST /admin/products", "POST /cart", "POST /products/{id}/buy", "POST /pay"} {
		tc := cases[name]
		do := api.Do
		if tc.client != nil {
			do = tc.client.Do
		}
		key := newKey()
		first := do(t, "POST", tc.path, tc.body, "Idempotency-Key", key)
		if first.StatusCode/100 != 2 || first.Header.Get(rest.ReplayedHeader) != "" {
			t.Fatalf("%s: first answer %d %s, replayed %q", name, first.StatusCode, first.Body, first.Header.Get(rest.ReplayedHeader))
		}
		before := state(t, c)
		// The retry comes in the other header, with the body laid out anew.
		again := do(t, "POST", tc.path, strings.ReplaceAll(tc.body, ":", ": "), "X-Idempotency-Key", key)
		if again.StatusCode != first.StatusCode || again.Body != first.Body ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Content-Type") != first.Header.Get("Content-Type") ||
			again.Header.Get(rest.ReplayedHeader) != "true" {
			t.Errorf("%s: replay %d %s %q\nfirst %d %s %q", name, again.StatusCode, again.Body, again.Header.Get("Location"), first.StatusCode, first.Body, first.Header.Get("Location"))
		}
		if after := state(t, c); after != before {
			t.Errorf("%s: the replay changed the state:\n%s\n%s", name, before, after)
		}
	}
}

// TestFiftyConcurrentPayments: fifty payments of one cart with one key
// debit once and order once; each answer is the one 201 or a 409. Their
// transactions conflict as they do on DynamoDB.
func TestFiftyConcurrentPayments(t *testing.T) {
	p, conflicts := servicetest.Conflicts(t)
	_, c := shop(t, conflicts)
	key := newKey()
	const n = 50
	answers := make([]servicetest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = c.Do(t, "POST", "/pay", "", "Idempotency-Key", key) })
	}
	wg.Wait()
	var body string
	count := map[int]int{}
	for _, a := range answers {
		count[a.StatusCode]++
		switch a.StatusCode {
		case 201:
			if body == "" {
				body = a.Body
			} else if a.Body != body {
				t.Errorf("two different 201 bodies:\n%s\n%s", body, a.Body)
			}
		case 409:
			if a.Header.Get("Retry-After") == "" {
				t.Errorf("409 without Retry-After: %s", a.Body)
			}
		default:
			t.Errorf("answer %d %s", a.StatusCode, a.Body)
		}
	}
	t.Logf("answers by status: %v; %d transaction conflicts", count, p.Injected()[ddbfault.Conflict])
	if got := state(t, c); got != `balance 25.51, 2 orders, cart {"items":[],"total":0.00}` {
		t.Errorf("after %d payments with one key: %s", n, got)
	}
}

func TestKeyMisuse(t *testing.T) {
	api, c := shop(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	before := state(t, c)
	key := newKey()
	if r := admin.Do(t, "POST", "/users/2/deposit", `{"amount": 5}`, "Idempotency-Key", key); r.StatusCode != 200 {
		t.Fatalf("deposit: %d %s", r.StatusCode, r.Body)
	}
	deposited := state(t, c)
	for name, r := range map[string]servicetest.Response{
		"another body":      admin.Do(t, "POST", "/users/2/deposit", `{"amount": 6}`, "Idempotency-Key", key),
		"another version":   admin.Do(t, "POST", "/api/v2/users/2/deposit", `{"amount": 5}`, "Idempotency-Key", key),
		"another v1 prefix": admin.Do(t, "POST", "/users/2/deposit", `{"amount": 5}`, "Idempotency-Key", key, "Accept", "application/vnd.quire.v2+json"),
	} {
		if r.StatusCode != 422 || r.Header.Get("Content-Type") != rest.ProblemMediaType {
			t.Errorf("%s with a used key: %d %s", name, r.StatusCode, r.Body)
		}
	}
	for name, h := range map[string][]string{
		"two different headers": {"Idempotency-Key", "a", "X-Idempotency-Key", "b"},
		"too long":              {"Idempotency-Key", strings.Repeat("k", 256)},
		"not ASCII":             {"Idempotency-Key", "clé"},
	} {
		if r := admin.Do(t, "POST", "/users/2/deposit", `{"amount": 5}`, h...); r.StatusCode != 400 {
			t.Errorf("%s: %d %s", name, r.StatusCode, r.Body)
		}
	}
	r := c.Do(t, "POST", "/pay", "")
	if r.StatusCode != 400 || !strings.Contains(r.Body, "Idempotency-Key") {
		t.Errorf("POST /pay without a key: %d %s", r.StatusCode, r.Body)
	}
	if after := state(t, c); after != deposited || before == deposited {
		t.Errorf("refused requests changed the state: %s, then %s", deposited, after)
	}
}

// TestKeysAreScopedToTheCaller: two users may use one key.
func TestKeysAreScopedToTheCaller(t *testing.T) {
	api, grace := shop(t)
	alan := api.As(t, 3, quire.RoleCustomer)
	for _, c := range []*servicetest.Client{grace, alan} {
		if r := c.Do(t, "POST", "/products/3/buy", `{"quantity":1}`, "Idempotency-Key", "shared-key"); r.StatusCode != 201 || r.Header.Get(rest.ReplayedHeader) != "" {
			t.Errorf("buy: %d %s", r.StatusCode, r.Body)
		}
	}
}

// TestSignUpKeysAreScopedToTheEmail: strangers, who have no account to
// scope their keys, share none: a sign-up's key is scoped to the email it
// registers, in any case. Two sign-ups of other emails with one key both
// run; the same key and email with another body is 422, and with the same
// body replays.
func TestSignUpKeysAreScopedToTheEmail(t *testing.T) {
	api, _ := shop(t)
	signUp := func(email, first string) servicetest.Response {
		body := fmt.Sprintf(`{"email":%q,"first_name":%q,"last_name":"Stranger","password":"correct horse battery"}`, email, first)
		return api.Do(t, "POST", "/users", body, "Idempotency-Key", "sign-up")
	}
	ada, bob := signUp("ada@example.com", "Ada"), signUp("bob@example.com", "Bob")
	for _, r := range []servicetest.Response{ada, bob} {
		if r.StatusCode != 201 || r.Header.Get(rest.ReplayedHeader) != "" {
			t.Errorf("a stranger's sign-up with a key another stranger used: %d %v %s", r.StatusCode, r.Header, r.Body)
		}
	}
	if r := signUp("ADA@example.com", "Adeline"); r.StatusCode != 422 {
		t.Errorf("the same key and email with another body: %d %s, want 422", r.StatusCode, r.Body)
	}
	if r := signUp("ada@example.com", "Ada"); r.StatusCode != 201 || r.Header.Get(rest.ReplayedHeader) != "true" || r.Body != ada.Body {
		t.Errorf("the same sign-up again: %d %v %s, want the first answer replayed", r.StatusCode, r.Header, r.Body)
	}
}

// TestFailuresAreNotRecorded: a refused request leaves its key free.
func TestFailuresAreNotRecorded(t *testing.T) {
	api, c := shop(t)
	key := newKey()
	if r := c.Do(t, "POST", "/products/1/buy", `{"quantity":5}`, "Idempotency-Key", key); r.StatusCode != 409 {
		t.Fatalf("buy beyond the balance: %d %s", r.StatusCode, r.Body)
	}
	api.As(t, 1, quire.RoleAdmin).Expect(t, "POST", "/users/2/deposit", `{"amount": 100}`, 200)
	if r := c.Do(t, "POST", "/products/1/buy", `{"quantity":5}`, "Idempotency-Key", key); r.StatusCode != 201 || r.Header.Get(rest.ReplayedHeader) != "" {
		t.Errorf("the same request after the deposit: %d %s", r.StatusCode, r.Body)
	}
}

// TestExpiredRecordsRunAgain: a record past its expiry counts as absent
// before DynamoDB deletes it.
func TestExpiredRecordsRunAgain(t *testing.T) {
	api, c := shop(t, servicetest.Option{DynamoDB: true}) // ages DynamoDB's record
	key := newKey()
	first := c.Do(t, "POST", "/products/3/buy", `{"quantity":1}`, "Idempotency-Key", key)
	out, err := api.DB.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(api.Tables.Physical(routes.TableIdempotency))})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("records: %v, %v", out, err)
	}
	if _, err := api.DB.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(api.Tables.Physical(routes.TableIdempotency)),
		Key:                       map[string]types.AttributeValue{"pk": out.Items[0]["pk"]},
		UpdateExpression:          aws.String("SET expires_at = :past"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: "1"}},
	}); err != nil {
		t.Fatal(err)
	}
	again := c.Do(t, "POST", "/products/3/buy", `{"quantity":1}`, "Idempotency-Key", key)
	if again.StatusCode != 201 || again.Header.Get(rest.ReplayedHeader) != "" || again.Body == first.Body {
		t.Errorf("after expiry: %d %s, replayed %q", again.StatusCode, again.Body, again.Header.Get(rest.ReplayedHeader))
	}
	if got := state(t, c); !strings.HasPrefix(got, "balance 30.02, 3 orders") {
		t.Errorf("two buys of 9.99: %s", got)
	}
}
