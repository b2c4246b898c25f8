// Package secrets keeps one AWS Secrets Manager secret: Quire's signing keys.
//
// It calls Secrets Manager's JSON API itself, each call a POST signed with
// the SDK's Signature Version 4 signer, as the SDK's client sends it. The
// client's package would cost the auth function's every cold start its
// endpoint tables' init (0.2 ms, a sixteenth of the hello-world floor's
// init) for two calls whose endpoint Quire knows (awsenv.Env.Endpoint).
package secrets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/quireapi/quire/internal/awsenv"
)

// Secret is one secret's current value.
type Secret struct {
	id       string
	endpoint string
	region   string
	creds    aws.CredentialsProvider
	client   *http.Client
	signer   *v4.Signer
}

// attempts is how many times a call is made when Secrets Manager throttles
// it, fails on its side, or cannot be reached, as the SDK's standard
// retryer makes it; retryPause is the pause after the first, doubled after
// each.
const (
	attempts   = 3
	retryPause = 100 * time.Millisecond
)

// New returns the secret id (a name or ARN) reached with env's region and
// credentials.
func New(env awsenv.Env, id string) (*Secret, error) {
	if !env.HasCredentials() {
		return nil, errors.New("secrets: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	endpoint := env.Endpoint("secretsmanager")
	transport := env.Transport(endpoint, &net.Dialer{Timeout: time.Second}, time.Second, false)
	return &Secret{
		id: id, endpoint: endpoint, region: env.Region, creds: env.Credentials(),
		client: &http.Client{Timeout: 5 * time.Second, Transport: transport},
		signer: v4.NewSigner(),
	}, nil
}

// The IAM actions of the calls Load and Save send, by method: each
// function's role allows those of the methods its code calls (infra). A
// call's X-Amz-Target is its action's, "secretsmanager.<operation>".
var Actions = map[string]string{
	"Load": "secretsmanager:GetSecretValue",
	"Save": "secretsmanager:PutSecretValue",
}

// Load returns the secret's current string value.
func (s *Secret) Load(ctx context.Context) ([]byte, error) {
	var out struct{ SecretString *string }
	if err := s.call(ctx, Actions["Load"], map[string]string{"SecretId": s.id}, &out); err != nil {
		return nil, fmt.Errorf("read secret %s: %w", s.id, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("read secret %s: it has no string value", s.id)
	}
	return []byte(*out.SecretString), nil
}

// Save stores value as the secret's new current version.
func (s *Secret) Save(ctx context.Context, value []byte) error {
	if err := s.call(ctx, Actions["Save"], map[string]string{"SecretId": s.id, "SecretString": string(value)}, nil); err != nil {
		return fmt.Errorf("write secret %s: %w", s.id, err)
	}
	return nil
}

// Error is an error Secrets Manager answered: its type, such as
// ResourceNotFoundException, and its message.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d): %s", e.Type, e.Status, e.Message) }

// retryable reports whether another attempt may succeed: Secrets Manager
// throttled the call or failed on its side.
func (e *Error) retryable() bool {
	return e.Status >= 500 || strings.Contains(e.Type, "Throttling")
}

// call makes the call of the IAM action action with the JSON body in,
// decoding the answer into out (unless nil), again while it fails in a way
// a later attempt may not.
func (s *Secret) call(ctx context.Context, action string, in, out any) error {
	target := strings.Replace(action, ":", ".", 1) // secretsmanager.GetSecretValue
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	pause := retryPause
	for attempt := 1; ; attempt++ {
		err = s.attempt(ctx, target, body, out)
		var answered *Error
		if err == nil || attempt == attempts || errors.As(err, &answered) && !answered.retryable() || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
		pause *= 2
	}
}

// attempt makes one signed call of the operation target names.
func (s *Secret) attempt(ctx context.Context, target string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", target)
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return err
	}
	hash := sha256.Sum256(body)
	if err := s.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(hash[:]), "secretsmanager", s.region, time.Now()); err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(answer, &e) // an answer that is not JSON leaves its status alone to say it
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return &Error{Status: resp.StatusCode, Type: e.Type[strings.LastIndexByte(e.Type, '#')+1:], Message: e.Message}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
