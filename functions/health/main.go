// Command health is the Lambda function of Quire's health resource group.
package main

import (
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupHealth, service.Health) }
