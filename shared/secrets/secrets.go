// Package secrets keeps one AWS Secrets Manager secret: Quire's signing keys.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/quireapi/quire/shared/awsenv"
)

// Secret is one secret's current value.
type Secret struct {
	client *secretsmanager.Client
	id     string
}

// New returns the secret id (a name or ARN) reached with env's region and
// credentials.
func New(env awsenv.Env, id string) (*Secret, error) {
	if !env.HasCredentials() {
		return nil, errors.New("secrets: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	transport := env.Transport(env.Endpoint("secretsmanager"), &net.Dialer{Timeout: time.Second}, time.Second, false)
	opts := secretsmanager.Options{
		Region:      env.Region,
		Credentials: env.Credentials(),
		HTTPClient:  &http.Client{Timeout: 5 * time.Second, Transport: transport},
	}
	return &Secret{client: secretsmanager.New(opts), id: id}, nil
}

// Load returns the secret's current string value.
func (s *Secret) Load(ctx context.Context) ([]byte, error) {
	out, err := s.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &s.id})
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", s.id, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("read secret %s: it has no string value", s.id)
	}
	return []byte(*out.SecretString), nil
}

// Save stores value as the secret's new current version.
func (s *Secret) Save(ctx context.Context, value []byte) error {
	_, err := s.client.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{
		SecretId: &s.id, SecretString: aws.String(string(value)),
	})
	if err != nil {
		return fmt.Errorf("write secret %s: %w", s.id, err)
	}
	return nil
}
