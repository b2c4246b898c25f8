// Command orders is the Lambda function of Quire's orders resource group.
package main

import (
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
)

func main() { service.Run(routes.GroupOrders, service.Orders) }
