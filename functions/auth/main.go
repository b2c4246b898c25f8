// Command auth is the auth function: POST /login, GET /.well-known/jwks.json,
// and the custom resource that writes and rotates the signing keys in their
// Secrets Manager secret.
package main

import (
	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/secrets"
	"github.com/quireapi/quire/shared/service"
)

func main() {
	service.RunAuth(func(c service.Config, id string) (auth.SecretStore, error) {
		return secrets.New(c.DynamoDB.AWS, id)
	})
}
