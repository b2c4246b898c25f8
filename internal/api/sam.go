package api

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/service"
)

// SAMEnvFile is where `make run` writes the --env-vars file of `sam local
// invoke` (see SAMEnv).
const SAMEnvFile = "build/sam-env.json"

// SAMEnv returns the --env-vars file with which `sam local invoke` runs a
// function of the synthesized template against the API c configures, as
// `make run` serves it. The SAM CLI passes a function only the variables its
// template declares, and resolves a table's Ref to its logical id; the stack
// declares DYNAMODB_ENDPOINT for every function with a table and
// SIGNING_KEYS for the auth function, so that this file, in SAM's
// CloudFormation parameter file format (its Parameters override each
// function's variables of the same name), can give them: DynamoDB at c's
// endpoint (127.0.0.1 for `make run`, whose DynamoDB Local listens there
// only: the container reaches it with --docker-network host), each table's
// physical name, c's signing keys for the auth function and their public
// half for the authorizer, and the issuer and audience of c's tokens. It
// returns an error when c has no endpoint or no valid signing keys.
func SAMEnv(c service.Config) ([]byte, error) {
	endpoint, err := url.Parse(c.DynamoDB.Endpoint)
	if err != nil || endpoint.Host == "" {
		return nil, fmt.Errorf("sam env: DynamoDB endpoint %q: want a URL", c.DynamoDB.Endpoint)
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
