// Command catalog is the Lambda function of Quire's catalog resource group.
package main

import (
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupCatalog, service.Catalog) }
