// Command auth is the auth function: POST /login and GET
// /.well-known/jwks.json, signing with the keys it reads from their Secrets
// Manager secret (the keys function writes them).
package main

import (
	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/secrets"
	"github.com/quireapi/quire/internal/service"
)

func main() {
	api.RunAuth(func(c service.Config, id string) (auth.SecretStore, error) {
		return secrets.New(c.DynamoDB.AWS, id)
	})
}
