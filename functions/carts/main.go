// Command carts is the Lambda function of Quire's carts resource group.
package main

import (
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
)

func main() { service.Run(routes.GroupCarts, service.Carts) }
