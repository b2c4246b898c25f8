package dynamo

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Config says how to reach DynamoDB.
type Config struct {
	Region string
	// Endpoint, when set, names a DynamoDB other than AWS's, such as
	// DynamoDB Local ("http://localhost:8000"). Credentials are then
	// optional and response checksums are not validated (DynamoDB Local's
	// error responses carry wrong ones).
	Endpoint string
	// Credentials from the Lambda environment. Empty with an Endpoint set:
	// dummy credentials, which DynamoDB Local accepts.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Tables maps logical table names to physical ones.
	Tables TableNames
}

// ConfigFromEnv reads the configuration the Lambda runtime and the CDK stack
// set: AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, DYNAMODB_ENDPOINT and one <TABLE>_TABLE per table.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		Region:          getenv("AWS_REGION"),
		Endpoint:        getenv("DYNAMODB_ENDPOINT"),
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
		Tables:          TableNamesFromEnv(getenv),
	}
}

// NewClient builds a DynamoDB client straight from c, without the SDK's
// shared-config loader, which costs a cold start more than the client itself.
// It returns an error when neither credentials nor an endpoint are set.
func NewClient(c Config, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	creds := aws.Credentials{
		AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey,
		SessionToken: c.SessionToken, Source: "environment",
	}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		if c.Endpoint == "" {
			return nil, errors.New("dynamo: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and no DYNAMODB_ENDPOINT is")
		}
		creds = aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "local"}
	}
	opts := dynamodb.Options{
		Region: c.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
		opts.DisableValidateResponseChecksum = true
	}
	return dynamodb.New(opts, optFns...), nil
}
