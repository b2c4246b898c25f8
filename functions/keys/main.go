// Command keys is the keys function: the CloudFormation custom resource
// that writes the signing keys into their Secrets Manager secret and rotates
// them. It is the only function that may write the secret, and it serves
// no route.
package main

import (
	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/secrets"
	"github.com/quireapi/quire/internal/service"
)

func main() {
	api.RunKeys(func(c service.Config, id string) (auth.SecretStore, error) {
		return secrets.New(c.DynamoDB.AWS, id)
	})
}
