// Command keys is the keys function: the CloudFormation custom resource
// that writes the signing keys into their Secrets Manager secret and rotates
// them. It is the only function that may write the secret, and it serves
// no route.
package main

import (
	"github.com/quireapi/quire/shared/api"
	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/secrets"
	"github.com/quireapi/quire/shared/service"
)

func main() {
	api.RunKeys(func(c service.Config, id string) (auth.SecretStore, error) {
		return secrets.New(c.DynamoDB.AWS, id)
	})
}
