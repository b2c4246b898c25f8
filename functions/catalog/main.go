// Command catalog is the Lambda function of Quire's catalog resource group.
package main

import (
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
)

func main() { service.Run(routes.GroupCatalog, service.Catalog) }
