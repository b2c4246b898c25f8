// Package awsenv reads the region and credentials the Lambda runtime puts in
// a function's environment, so that AWS clients are built straight from
// them: the SDK's shared-config loader costs a cold start more than the
// clients do.
package awsenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Env is the region and credentials of a function, and the roots its TLS
// connections trust.
type Env struct {
	Region                                     string
	AccessKeyID, SecretAccessKey, SessionToken string
	// SystemRoots verifies every endpoint with the system's roots, AWS's
	// too (see Roots).
	SystemRoots bool
}

// FromEnv reads AWS_REGION (default us-east-1), AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and QUIRE_TLS_ROOTS ("system":
// SystemRoots).
func FromEnv(getenv func(string) string) Env {
	e := Env{
		Region:          getenv("AWS_REGION"),
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		SystemRoots:     getenv("QUIRE_TLS_ROOTS") == "system",
	}
	if e.Region == "" {
		e.Region = "us-east-1"
	}
	return e
}

// HasCredentials reports whether an access key is set.
func (e Env) HasCredentials() bool { return e.AccessKeyID != "" && e.SecretAccessKey != "" }

// Credentials returns a provider of e's credentials, or of dummy ones (which
// DynamoDB Local accepts) when e has none.
func (e Env) Credentials() aws.CredentialsProvider {
	creds := aws.Credentials{
		AccessKeyID: e.AccessKeyID, SecretAccessKey: e.SecretAccessKey,
		SessionToken: e.SessionToken, Source: "environment",
	}
	if !e.HasCredentials() {
		creds = aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "local"}
	}
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil })
}
