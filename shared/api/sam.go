package api

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"

	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/dynamo"
	"github.com/quireapi/quire/shared/service"
)

// SAMEnvFile is where `make run` writes the --env-vars file of `sam local
// invoke` (see SAMEnv).
const SAMEnvFile = "build/sam-env.json"

// SAMHost is the name a function in the SAM CLI's container reaches the
// machine that runs it by: Docker Desktop's, which `--add-host
// host.docker.internal:host-gateway` gives on Linux too.
const SAMHost = "host.docker.internal"

// SAMEnv returns the --env-vars file with which `sam local invoke` runs a
// function of the synthesized template against the API c configures, as
// `make run` serves it. The SAM CLI passes a function only the variables its
// template declares, and resolves a table's Ref to its logical id; the stack
// declares DYNAMODB_ENDPOINT for every function with a table and
// SIGNING_KEYS for the auth function, so that this file, in SAM's
// CloudFormation parameter file format (its Parameters override each
// function's variables of the same name), can give them: DynamoDB at c's
// endpoint as the container reaches the machine (SAMHost), each table's
// physical name, c's signing keys for the auth function and their public
// half for the authorizer, and the issuer and audience of c's tokens. It
// returns an error when c has no endpoint or no valid signing keys.
func SAMEnv(c service.Config) ([]byte, error) {
	endpoint, err := url.Parse(c.DynamoDB.Endpoint)
	if err != nil || endpoint.Host == "" {
		return nil, fmt.Errorf("sam env: DynamoDB endpoint %q: want a URL", c.DynamoDB.Endpoint)
	}
	if ip := net.ParseIP(endpoint.Hostname()); endpoint.Hostname() == "localhost" || ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		endpoint.Host = net.JoinHostPort(SAMHost, endpoint.Port())
	}
	keys, err := auth.ParseKeySet([]byte(c.SigningKeys))
	if err != nil {
		return nil, fmt.Errorf("sam env: signing keys: %w", err)
	}
	jwks, err := keys.PublicSet().MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("sam env: public keys: %w", err)
	}
	env := map[string]string{
		"DYNAMODB_ENDPOINT": endpoint.String(),
		"SIGNING_KEYS":      c.SigningKeys,
		"JWKS":              string(jwks),
		"TOKEN_ISSUER":      c.Tokens.Issuer,
		"TOKEN_AUDIENCE":    c.Tokens.Audience,
	}
	for _, t := range dynamo.Tables() {
		env[dynamo.TableEnv(t.Name)] = c.DynamoDB.Tables.Physical(t.Name)
	}
	return json.MarshalIndent(map[string]any{"Parameters": env}, "", "  ")
}
