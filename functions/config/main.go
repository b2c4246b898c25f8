// Command config is the Lambda function of Quire's configuration document.
package main

import (
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

func main() { service.Run(routes.GroupConfig, service.Configuration) }
