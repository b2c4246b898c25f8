package service_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/demo"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service/servicetest"
)

// count returns how many items of table have the partition key pk.
func count(t *testing.T, db *dynamodb.Client, table, pk string) int {
	t.Helper()
	out, err := db.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :pk"), ConsistentRead: aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// scanCount returns how many items table holds.
func scanCount(t *testing.T, db *dynamodb.Client, table string) int {
	t.Helper()
	out, err := db.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// Deleting an account removes what belongs only to it: its sessions, its
// email's failed logins and its cart. Its orders stay, as the shop's
// records, readable by an admin.
func TestDeleteRemovesWhatBelongsToTheAccount(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Demo: true}) // counts DynamoDB's items
	admin := api.As(t, 1, quire.RoleAdmin)
	login := func(password string) (int, string) {
		body, _ := json.Marshal(map[string]string{"email": demo.CustomerEmail, "password": password})
		r := api.Do(t, "POST", "/login", string(body))
		var tok struct {
			RefreshToken string `json:"refresh_token"`
		}
		if err := json.Unmarshal([]byte(r.Body), &tok); err != nil {
			t.Fatal(err)
		}
		return r.StatusCode, tok.RefreshToken
	}
	status, refresh := login(demo.CustomerPassword)
	if status != http.StatusOK || refresh == "" {
		t.Fatalf("login: %d, refresh token %q", status, refresh)
	}
	login(demo.CustomerPassword) // a second session
	if status, _ := login("not the password"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", status)
	}
	sessions, carts := api.Tables.Physical(routes.TableSessions), api.Tables.Physical(routes.TableCarts)
	mine := count(t, api.DB, sessions, "user#2")
	if mine < 2 {
		t.Fatalf("%d sessions of Grace before, want her 2 or more", mine)
	}
	before := scanCount(t, api.DB, sessions)

	admin.Expect(t, "DELETE", "/users/2", "", http.StatusNoContent)

	if n := count(t, api.DB, sessions, "user#2"); n != 0 {
		t.Errorf("%d sessions of the deleted user left", n)
	}
	if n := scanCount(t, api.DB, sessions); n != before-mine-1 {
		t.Errorf("%d items in the sessions table, want %d: her %d sessions and her failed login gone, nothing else", n, before-mine-1, mine)
	}
	if n := count(t, api.DB, carts, "cart#2"); n != 0 {
		t.Errorf("the deleted user's cart is still stored")
	}
	r := api.Do(t, "POST", "/tokens", `{"refresh_token":"`+refresh+`"}`)
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the deleted user's refresh token: %d %s", r.StatusCode, r.Body)
	}
	admin.Expect(t, "GET", "/orders/1", "", http.StatusOK)
}

// A deleted account's access token, stateless, still verifies until it
// expires, but writes nothing: every write made on behalf of a caller
// checks, in its own transaction, that the caller's account exists. A
// deleted customer's cart takes nothing (401) and has nothing to remove
// (404), its payments find no account to pay from (409), and its own
// account is gone (404); a deleted admin's
// token changes no book, author, configuration, account or profile (401). Each
// answer is the domain's problem, and the tables are as they were.
func TestGoneAccountWritesNothing(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Demo: true}) // counts DynamoDB's items
	admin := api.As(t, 1, quire.RoleAdmin)
	grace := api.Gone(t, 2, quire.RoleCustomer)
	admin.Expect(t, "DELETE", "/users/2", "", http.StatusNoContent)
	// An admin deleted by another admin: a token of the same role, whose
	// account is gone (the demo has one admin, so this one never existed).
	goneAdmin := api.Gone(t, 4_000, quire.RoleAdmin)

	carts := api.Tables.Physical(routes.TableCarts)
	catalogItems, configItems := scanCount(t, api.DB, api.Tables.Physical(routes.TableCatalog)), scanCount(t, api.DB, api.Tables.Physical(routes.TableConfig))
	alan := admin.Expect(t, "GET", "/users/3", "", http.StatusOK).Body
	book := admin.Expect(t, "GET", "/products/1", "", http.StatusOK).Body
	for _, c := range []struct {
		who          *servicetest.Client
		method, path string
		body         string
		status       int
		code         string
		header       []string
	}{
		{grace, "POST", "/cart", `{"product_id": 1, "quantity": 1}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{grace, "DELETE", "/cart/items/1", "", http.StatusNotFound, quire.ENOTFOUND, nil}, // the cart went with the account
		{grace, "POST", "/pay", "", http.StatusConflict, quire.EACCOUNTCLOSED, []string{"Idempotency-Key", "gone-pay"}},
		{grace, "POST", "/products/1/buy", `{"quantity": 1}`, http.StatusConflict, quire.EACCOUNTCLOSED, nil},
		{grace, "PUT", "/users/2/profile", `{"bio": "", "location": "", "website": "", "newsletter": false}`, http.StatusNotFound, quire.ENOTFOUND, nil},
		{grace, "POST", "/users/2/close", "", http.StatusNotFound, quire.ENOTFOUND, nil},
		{goneAdmin, "POST", "/admin/authors", `{"name": "Virginia Woolf"}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "POST", "/admin/products", `{"name": "Orlando", "price": 10.50, "status": "AVAILABLE", "author_id": 1}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "PUT", "/admin/products/1", `{"name": "Renamed", "price": 1.00, "status": "AVAILABLE", "author_id": 1}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "PUT", "/admin/config", `{"gone": true}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "POST", "/users/3/deposit", `{"amount": 5.00}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "PUT", "/users/3", `{"email": "alan@quire.example", "first_name": "Al", "last_name": "Turing", "role": "customer", "status": "ACTIVE"}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "PUT", "/users/3/profile", `{"bio": "taken over", "location": "", "website": "", "newsletter": false}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "PUT", "/api/v2/users/3/profile", `{"bio": "taken over", "location": "", "website": "", "newsletter": false}`, http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "POST", "/users/3/close", "", http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
		{goneAdmin, "DELETE", "/users/3", "", http.StatusUnauthorized, quire.EUNAUTHORIZED, nil},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			c.who.ExpectProblem(t, c.method, c.path, c.body, c.status, c.code, c.header...)
		})
	}
	if n := count(t, api.DB, carts, "cart#2"); n != 0 {
		t.Errorf("the deleted customer has %d carts, want none", n)
	}
	if got := admin.Expect(t, "GET", "/users/3", "", http.StatusOK).Body; got != alan {
		t.Errorf("another customer changed: %s, was %s", got, alan)
	}
	if got := admin.Expect(t, "GET", "/products/1", "", http.StatusOK).Body; got != book {
		t.Errorf("a book changed: %s, was %s", got, book)
	}
	if n := scanCount(t, api.DB, api.Tables.Physical(routes.TableCatalog)); n != catalogItems {
		t.Errorf("the catalog holds %d items, was %d", n, catalogItems)
	}
	if n := scanCount(t, api.DB, api.Tables.Physical(routes.TableConfig)); n != configItems {
		t.Errorf("the configuration table holds %d items, was %d", n, configItems)
	}
	// An admin whose account exists writes as before.
	admin.Expect(t, "POST", "/users/3/deposit", `{"amount": 5.00}`, http.StatusOK)
}
