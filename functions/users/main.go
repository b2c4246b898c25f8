// Command users is the Lambda function of Quire's users resource group.
package main

import (
	"github.com/quireapi/quire/shared/password/argon2id"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
)

func main() { service.Run(routes.GroupUsers, service.Users(argon2id.Hasher)) }
