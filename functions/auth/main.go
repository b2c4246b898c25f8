// Command auth is the auth function: POST /login, GET /.well-known/jwks.json,
// and the custom resource that writes and rotates the signing keys.
package main

import "github.com/quireapi/quire/shared/service"

func main() { service.RunAuth() }
