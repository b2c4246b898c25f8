// Command carts is the Lambda function of Quire's carts resource group.
package main

import (
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupCarts, service.Carts) }
