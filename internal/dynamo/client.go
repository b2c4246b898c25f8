package dynamo

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/awsenv"
)

// Config says how to reach DynamoDB.
type Config struct {
	AWS awsenv.Env
	// Endpoint, when set, names a DynamoDB other than AWS's, such as
	// DynamoDB Local ("http://localhost:8000"). Credentials are then
	// optional and response checksums are not validated (DynamoDB Local's
	// error responses carry wrong ones).
	Endpoint string
	// Tables maps logical table names to physical ones.
	Tables TableNames
	// WarmUp opens the client's first connection, TLS handshake included,
	// in the background once awsenv.StartWarmUps or the first request
	// starts it (see awsenv.Transport): a function's configuration sets it,
	// so that its first request finds the connection open.
	WarmUp bool
}

// ConfigFromEnv reads the configuration the Lambda runtime and the CDK stack
// set: AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, DYNAMODB_ENDPOINT and one <TABLE>_TABLE per table.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		AWS:      awsenv.FromEnv(getenv),
		Endpoint: getenv("DYNAMODB_ENDPOINT"),
		Tables:   TableNamesFromEnv(getenv),
	}
}

// NewClient builds a DynamoDB client straight from c, without the SDK's
// shared-config loader, which costs a cold start more than the client itself.
// Its calls retry and time out as MaxAttempts and AttemptTimeout say, and
// fail with EUNAVAILABLE when DynamoDB is throttling, failing, slow or out of
// reach (see classify). It returns an error when neither credentials nor an
// endpoint are set.
func NewClient(c Config, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	if !c.AWS.HasCredentials() && c.Endpoint == "" {
		return nil, errors.New("dynamo: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and no DYNAMODB_ENDPOINT is")
	}
	if c.AWS.Region == "" {
		c.AWS.Region = "us-east-1"
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = c.AWS.Endpoint("dynamodb")
	}
	transport := c.AWS.Transport(endpoint, &net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}, time.Second, c.WarmUp)
	transport.MaxIdleConnsPerHost = 64 // the local gateway's functions serve many requests at once
	transport.IdleConnTimeout = 90 * time.Second
	transport.ExpectContinueTimeout = time.Second
	opts := dynamodb.Options{
		Region:      c.AWS.Region,
		Credentials: c.AWS.Credentials(),
		HTTPClient:  &http.Client{Timeout: AttemptTimeout, Transport: awsenv.KeepConnections(transport)},
		Retryer:     retryer(),
		APIOptions:  []func(*middleware.Stack) error{classify, observe},
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
		opts.DisableValidateResponseChecksum = true
	}
	return dynamodb.New(opts, optFns...), nil
}
