// Command users is the Lambda function of Quire's users resource group.
package main

import (
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupUsers, service.Users(argon2id.Hasher)) }
