// Command config is the Lambda function of Quire's configuration document.
package main

import (
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service"
)

func main() { service.Run(routes.GroupConfig, service.Configuration) }
