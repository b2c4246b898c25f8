package client_test

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/quireapi/quire/client"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/testing/quiretest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// oapiCodegen is the client's generator, pinned (see quiretest.Tool).
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// TestGenerated: quire.gen.go is what the pinned oapi-codegen generates
// from version 2's contract with oapi-codegen.yaml: `make client`
// regenerates it after `make contract`.
func TestGenerated(t *testing.T) {
	cmd := quiretest.Tool("..", oapiCodegen, "-config", "oapi-codegen.yaml", filepath.Join("..", "contracts", "v2.json"))
	cmd.Stderr = os.Stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	committed, err := os.ReadFile("quire.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Error("client/quire.gen.go is not what oapi-codegen generates from contracts/v2.json: `make client` regenerates it")
	}
}

// bearer sends token as the request's bearer token.
func bearer(token string) client.ClientOption {
	return client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}

// money writes an amount as the API does.
func money(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// cents is an amount in cents.
func cents(f float64) int64 { return int64(math.Round(f * 100)) }

// TestJourney drives a whole journey through the generated client against
// the local gateway, on the demo data: the admin funds the customer's
// account to an amount float32 could not hold (131072.01); the customer
// logs in, puts a book in the cart and pays for the cart, and the payment
// sent again with its key is a replay of the same order, which the orders
// list; then the admin changes the book's price with the ETag it read, and
// a write with that ETag again is refused.
func TestJourney(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{Demo: true})
	ctx := t.Context()
	anonymous, err := client.NewClientWithResponses(api.URL)
	if err != nil {
		t.Fatal(err)
	}
	login := func(email, password string) *client.ClientWithResponses {
		t.Helper()
		r, err := anonymous.PostLoginWithResponse(ctx, client.Credentials{Email: email, Password: &password})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("login as %s: %v %s", email, err, r.Body)
		}
		if r.JSON200.TokenType != "Bearer" {
			t.Errorf("token_type %q", r.JSON200.TokenType)
		}
		c, err := client.NewClientWithResponses(api.URL, bearer(r.JSON200.AccessToken))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	grace, admin := login(demo.CustomerEmail, demo.CustomerPassword), login(demo.AdminEmail, demo.AdminPassword)

	products, err := grace.GetV2ProductsWithResponse(ctx, &client.GetV2ProductsParams{})
	if err != nil || products.JSON200 == nil || len(*products.JSON200) == 0 {
		t.Fatalf("products: %v %s", err, products.Body)
	}
	book := (*products.JSON200)[0]
	if book.Status != client.ProductV2StatusAVAILABLE {
		t.Fatalf("the first product is %s", book.Status)
	}
	added, err := grace.PostV2CartWithResponse(ctx, &client.PostV2CartParams{}, client.CartAddition{ProductId: book.Id, Quantity: 2})
	if err != nil || added.StatusCode() != http.StatusOK && added.StatusCode() != http.StatusCreated {
		t.Fatalf("add to cart: %v %d %s", err, added.StatusCode(), added.Body)
	}
	cart, err := grace.GetV2CartWithResponse(ctx, &client.GetV2CartParams{})
	if err != nil || cart.JSON200 == nil {
		t.Fatalf("cart: %v %s", err, cart.Body)
	}
	inCart := false
	for _, l := range cart.JSON200.Items {
		inCart = inCart || l.ProductId == book.Id && l.Quantity == 2 && money(l.Subtotal) == money(2*book.Price)
	}
	if !inCart {
		t.Errorf("the cart %s does not hold two of the book %d", cart.Body, book.Id)
	}

	// 2^17 + 0.01 is where float32 loses cents: a Go client reads the
	// balance as float64, exactly.
	me, err := grace.GetV2UsersIdWithResponse(ctx, 2, &client.GetV2UsersIdParams{})
	if err != nil || me.JSON200 == nil {
		t.Fatalf("the customer: %v %s", err, me.Body)
	}
	balance := me.JSON200.Balance
	for i := range 13 {
		key := "journey-deposit-" + strconv.Itoa(i)
		r, err := admin.PostV2UsersIdDepositWithResponse(ctx, me.JSON200.Id, &client.PostV2UsersIdDepositParams{IdempotencyKey: &key},
			client.Deposit{Amount: 10000})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("deposit: %v %d %s", err, r.StatusCode(), r.Body)
		}
		balance = r.JSON200.Balance
	}
	key := "journey-deposit-cents"
	want := 131072.01
	r, err := admin.PostV2UsersIdDepositWithResponse(ctx, me.JSON200.Id, &client.PostV2UsersIdDepositParams{IdempotencyKey: &key},
		client.Deposit{Amount: float64(cents(want)-cents(balance)) / 100})
	if err != nil || r.JSON200 == nil || money(r.JSON200.Balance) != "131072.01" {
		t.Fatalf("deposit to 131072.01: %v %d %s", err, r.StatusCode(), r.Body)
	}

	pay := &client.PostV2PayParams{IdempotencyKey: "journey-pay"}
	paid, err := grace.PostV2PayWithResponse(ctx, pay)
	if err != nil || paid.JSON201 == nil {
		t.Fatalf("pay: %v %d %s", err, paid.StatusCode(), paid.Body)
	}
	order := *paid.JSON201
	if money(order.Total) != money(cart.JSON200.Total) || len(order.Items) != len(cart.JSON200.Items) {
		t.Errorf("the order %+v is not the cart %+v", order, *cart.JSON200)
	}
	again, err := grace.PostV2PayWithResponse(ctx, pay)
	if err != nil || again.JSON201 == nil || again.JSON201.Id != order.Id || again.HTTPResponse.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the payment sent again with its key: %v %d %v %s", err, again.StatusCode(), again.HTTPResponse.Header, again.Body)
	}
	after, err := grace.GetV2UsersIdWithResponse(ctx, me.JSON200.Id, &client.GetV2UsersIdParams{})
	if err != nil || after.JSON200 == nil || cents(after.JSON200.Balance) != cents(want)-cents(order.Total) {
		t.Errorf("the balance after paying %v: %v %s", order.Total, err, after.Body)
	}
	orders, err := grace.GetV2OrdersWithResponse(ctx, &client.GetV2OrdersParams{})
	if err != nil || orders.JSON200 == nil || !slices.ContainsFunc(*orders.JSON200, func(o client.Order) bool { return o.Id == order.Id }) {
		t.Errorf("the orders do not list order %d: %v %s", order.Id, err, orders.Body)
	}

	read, err := admin.GetV2ProductsIdWithResponse(ctx, book.Id, &client.GetV2ProductsIdParams{})
	if err != nil || read.JSON200 == nil {
		t.Fatalf("the book: %v %s", err, read.Body)
	}
	etag := client.IfMatch(read.HTTPResponse.Header.Get("ETag"))
	changed, err := admin.PutV2AdminProductsIdWithResponse(ctx, book.Id, &client.PutV2AdminProductsIdParams{IfMatch: &etag},
		client.ProductWriteV2{Name: book.Name, Price: book.Price + 1, Status: client.ProductWriteV2StatusAVAILABLE, AuthorId: book.AuthorId})
	if err != nil || changed.JSON200 == nil || money(changed.JSON200.Price) != money(book.Price+1) {
		t.Fatalf("a new price: %v %d %s", err, changed.StatusCode(), changed.Body)
	}
	stale, err := admin.PutV2AdminProductsIdWithResponse(ctx, book.Id, &client.PutV2AdminProductsIdParams{IfMatch: &etag},
		client.ProductWriteV2{Name: book.Name, Price: book.Price, Status: client.ProductWriteV2StatusAVAILABLE, AuthorId: book.AuthorId})
	if err != nil || stale.StatusCode() != http.StatusPreconditionFailed || stale.ApplicationproblemJSON412 == nil {
		t.Errorf("a write with a stale ETag: %v %d %s", err, stale.StatusCode(), stale.Body)
	}
}
