package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/authorizer"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/secrets"
)

// CDK context keys of the stack's auth settings.
const (
	// contextTokenLifetime is a Go duration: how long tokens are valid.
	contextTokenLifetime = "quire:tokenLifetime"
	// contextKeyGeneration is any value; changing it rotates the signing
	// key at the next deployment.
	contextKeyGeneration = "quire:signingKeyGeneration"
)

// tokenConfig returns the token settings of the stack: its own issuer, so
// that one deployment's tokens are not accepted by another, and the
// lifetime from the CDK context. It panics (failing the synth) on a
// lifetime that does not parse or is out of bounds.
func tokenConfig(stack awscdk.Stack) login.TokenConfig {
	lifetime := login.DefaultLifetime
	if v := stack.Node().TryGetContext(jsii.String(contextTokenLifetime)); v != nil {
		d, err := time.ParseDuration(fmt.Sprint(v))
		if err != nil || d < login.MinLifetime || d > login.MaxLifetime {
			panic(fmt.Sprintf("context %s = %v: want a duration from %v to %v", contextTokenLifetime, v, login.MinLifetime, login.MaxLifetime))
		}
		lifetime = d
	}
	return login.TokenConfig{Issuer: "quire/" + *stack.StackName(), Audience: login.DefaultAudience, Lifetime: lifetime}
}

// tokenEnv is the environment both the auth function and the authorizer
// read their token settings from.
func tokenEnv(c login.TokenConfig) map[string]*string {
	return map[string]*string{
		"TOKEN_ISSUER":   jsii.String(c.Issuer),
		"TOKEN_AUDIENCE": jsii.String(c.Audience),
		"TOKEN_LIFETIME": jsii.String(c.Lifetime.String()),
	}
}

// newSigningKeys defines the secret of the signing keys; the keys function,
// the only one that may write it, which serves the Custom::SigningKeys
// resource: it writes the first key, rotates keys when the generation
// changes, and answers with the public keys (attribute Jwks); and the auth
// function's right to read it, and nothing more.
func newSigningKeys(stack awscdk.Stack, authFn awslambda.Function, tokens login.TokenConfig, assetDir string) awscdk.CustomResource {
	secret := awssecretsmanager.NewSecret(stack, jsii.String("SigningKeySecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Quire's token signing keys (a JWK Set), written by the SigningKeys resource"),
		// Keys are disposable: without them, users log in again.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	suppress(secret, findingNoRotation, "The SigningKeys resource rotates the keys when the context value "+
		contextKeyGeneration+" changes, keeping the previous public key until its tokens expire; Secrets "+
		"Manager's rotation would replace the key without that overlap.")
	authFn.AddEnvironment(jsii.String("SIGNING_KEY_SECRET"), secret.SecretArn(), nil)
	// Empty: deployed, the keys are the secret's. Declared for `sam local
	// invoke`, whose --env-vars file gives the development keys here.
	authFn.AddEnvironment(jsii.String("SIGNING_KEYS"), jsii.String(""), nil)
	authFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   secretActions(reflect.TypeFor[auth.KeySource]()),
		Resources: &[]*string{secret.SecretArn()},
	}))
	// The keys it keeps depend on how long tokens live.
	keysFn := newLambda(stack, "keys", "Writes and rotates the token signing keys (Custom::SigningKeys)", 256,
		map[string]*string{"SIGNING_KEY_SECRET": secret.SecretArn(), "TOKEN_LIFETIME": jsii.String(tokens.Lifetime.String())},
		filepath.Join(assetDir, "keys"))
	keysFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   secretActions(reflect.TypeFor[auth.SecretStore]()),
		Resources: &[]*string{secret.SecretArn()},
	}))
	generation := "1"
	if v := stack.Node().TryGetContext(jsii.String(contextKeyGeneration)); v != nil {
		generation = fmt.Sprint(v)
	}
	// The ServiceToken makes the resource wait for the function, which
	// waits for its role's policy: it can write the secret when called.
	return awscdk.NewCustomResource(stack, jsii.String("SigningKeys"), &awscdk.CustomResourceProps{
		ServiceToken: keysFn.FunctionArn(),
		ResourceType: jsii.String("Custom::SigningKeys"),
		Properties:   &map[string]any{"SecretId": secret.SecretArn(), "Generation": generation},
	})
}

// authorizerName names the authorizer function among the served ones.
const authorizerName = "authorizer"

// newAuthorizerFunction defines the authorizer function, which verifies
// tokens offline with the public keys in its environment and may touch
// nothing.
func newAuthorizerFunction(stack awscdk.Stack, tokens login.TokenConfig, jwks *string, assetDir string) awslambda.Function {
	env := tokenEnv(tokens)
	delete(env, "TOKEN_LIFETIME")
	env["JWKS"] = jwks
	return newLambda(stack, authorizerName, "Verifies bearer tokens for every protected route", routes.AuthorizerMemoryMB, env,
		filepath.Join(assetDir, authorizerName))
}

// newAuthorizer defines the REQUEST authorizer API Gateway runs fn as, its
// answers cached per Authorization header never longer than a token
// lives. API Gateway takes a change of it only with a new deployment, and
// CDK hashes it into the deployment's logical id only for methods of the
// API's own stack, which the protected ones are not (see newAPI): its
// settings go into api's deployment's logical id here.
func newAuthorizer(stack awscdk.Stack, api awsapigateway.RestApi, fn awslambda.IFunction, tokens login.TokenConfig) awsapigateway.IAuthorizer {
	const header = "Authorization"
	ttl := authorizer.CacheTTL(tokens.Lifetime)
	api.LatestDeployment().AddToLogicalId(jsii.String(fmt.Sprintf("REQUEST authorizer on %s, cached %s", header, ttl)))
	return awsapigateway.NewRequestAuthorizer(stack, jsii.String("Authorizer"), &awsapigateway.RequestAuthorizerProps{
		AuthorizerName:  jsii.String("quire-bearer"),
		Handler:         fn,
		IdentitySources: &[]*string{awsapigateway.IdentitySource_Header(jsii.String(header))},
		ResultsCacheTtl: awscdk.Duration_Seconds(jsii.Number(ttl.Seconds())),
	})
}

// secretActions are the Secrets Manager actions of the methods of iface,
// the part of the secret a function's code is given (auth.KeySource to
// read it, auth.SecretStore to write it too): secrets.Actions names each
// method's.
func secretActions(iface reflect.Type) *[]*string {
	var out []*string
	for m := range iface.Methods() {
		out = append(out, jsii.String(secrets.Actions[m.Name]))
	}
	return &out
}
