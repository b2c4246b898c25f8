package client_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/quireapi/quire/client"
)

// Example logs in, then reads the cart as version 2 shows it: what
// docs/conventions.md shows a Go engineer (TestExampleIsShown).
func Example() {
	// example: start
	ctx := context.Background()
	quire, err := client.NewClientWithResponses("http://localhost:8080")
	if err != nil {
		panic(err)
	}
	password := "quire-customer-password"
	login, err := quire.PostLoginWithResponse(ctx, client.Credentials{Email: "grace@quire.example", Password: &password})
	if err != nil || login.JSON200 == nil {
		panic(fmt.Sprint(err, string(login.Body))) // a problem: its type, title, status and detail
	}
	token := login.JSON200.AccessToken
	cart, err := quire.GetV2CartWithResponse(ctx, &client.GetV2CartParams{},
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		})
	if err != nil || cart.JSON200 == nil {
		panic(fmt.Sprint(err, string(cart.Body)))
	}
	fmt.Printf("%d books, %.2f\n", len(cart.JSON200.Items), cart.JSON200.Total) // amounts are float64, ids int64
	// example: end
}

// TestExampleIsShown: docs/conventions.md shows Example as it is here.
func TestExampleIsShown(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "\t// example: start\n")
	snippet, _, _ := strings.Cut(rest, "\t// example: end\n")
	var shown strings.Builder
	for line := range strings.Lines(snippet) {
		shown.WriteString(strings.TrimPrefix(line, "\t"))
	}
	page, err := os.ReadFile("../docs/conventions.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "```go\n" + shown.String() + "```\n"; !strings.Contains(string(page), want) {
		t.Errorf("docs/conventions.md does not show the client's example as client/example_test.go has it:\n%s", want)
	}
}
