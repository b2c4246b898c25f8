package service_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFunctionsLinkWhatTheyUse: token signing (golang-jwt) and password
// hashing (Argon2id, whose package init probes the CPU) stay out of the
// functions that neither sign tokens nor hash passwords, so that their cold
// starts do not pay for them; and the pre-traffic hook links a Lambda client
// without the schema tables of the SDK's newer ones (0.6 ms of init: see
// the pin in go.mod), nor the domain and DynamoDB of the functions it checks.
// No function links the Go client's runtime (package client's, for
// clients of the API).
func TestFunctionsLinkWhatTheyUse(t *testing.T) {
	const jwt, argon2 = "github.com/golang-jwt/jwt/v5", "golang.org/x/crypto/argon2"
	const schemas, dynamodb = "github.com/aws/aws-sdk-go-v2/service/lambda/schemas", "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	const client = "github.com/oapi-codegen/runtime"
	unused := map[string][]string{
		"health": {jwt, argon2, client}, "catalog": {jwt, argon2, client}, "carts": {jwt, argon2, client},
		"orders": {jwt, argon2, client}, "config": {jwt, argon2, client}, "users": {jwt, client}, "authorizer": {argon2, client},
		"hook": {jwt, argon2, schemas, dynamodb, client}, "auth": {client}, "keys": {client}, "events": {client},
	}
	for fn, pkgs := range unused {
		out, err := exec.Command("go", "list", "-deps", "../../functions/"+fn).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", fn, err)
		}
		for _, pkg := range pkgs {
			if slices.Contains(strings.Fields(string(out)), pkg) {
				t.Errorf("function %s links %s", fn, pkg)
			}
		}
	}
}
