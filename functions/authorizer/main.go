// Command authorizer is the Lambda REQUEST authorizer of every protected
// route: it verifies bearer tokens against the public keys in JWKS.
package main

import "github.com/quireapi/quire/shared/service"

func main() { service.RunAuthorizer() }
