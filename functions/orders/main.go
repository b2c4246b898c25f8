// Command orders is the Lambda function of Quire's orders resource group.
package main

import (
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupOrders, service.Orders) }
