package dynamo

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/telemetry"
)

// How the client retries, and how long it waits for DynamoDB: a call makes
// at most MaxAttempts attempts, each of at most AttemptTimeout, with
// quire.Backoff between them; so a call that DynamoDB throttles, fails or
// ignores gives up within about 7 s, and sooner when its request's
// deadline comes first. A write whose answer was lost is safe to retry: a
// transaction's retry carries its ClientRequestToken (see tx.commit), and
// a single-item write's retry finds its own content hash (see raced).
const (
	MaxAttempts    = 3
	AttemptTimeout = 2 * time.Second
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
// Its calls retry and time out as MaxAttempts and AttemptTimeout say (see
// retryer); one that DynamoDB throttled, failed or left unanswered on every
// attempt ends in a *retry.MaxAttemptsError, which rest.Error answers as
// 503 with Retry-After. It returns an error when neither credentials nor an
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
		APIOptions:  []func(*middleware.Stack) error{telemetry.ObserveDynamoDB(classify)},
	}
	if c.Endpoint != "" {
		opts.BaseEndpoint = aws.String(c.Endpoint)
		opts.DisableValidateResponseChecksum = true
	}
	return dynamodb.New(opts, optFns...), nil
}

// retryer is the SDK's standard retryer with MaxAttempts and quire.Backoff
// in place of its defaults (up to 20 s between attempts, longer than a
// request may take). Besides what the SDK retries (throttling, server
// errors, connection errors and timeouts), it retries any server fault, a
// transaction cancelled only because it was throttled (a
// TransactionCanceledException, which the SDK does not take for
// throttling; the retry carries the same ClientRequestToken), and a
// single-item write that met a transaction writing its item
// (TransactionConflictException: nothing was written, and a later try
// finds the transaction done). So every passing failure of DynamoDB's is
// retried, and ends, when no attempt gets past it, as a
// *retry.MaxAttemptsError.
func retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = MaxAttempts
		o.Retryables = append(slices.Clip(o.Retryables), retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			_, conflict := errors.AsType[*types.TransactionConflictException](err)
			ae, ok := errors.AsType[smithy.APIError](err)
			if conflict || cancelledFor(err, "ThrottlingError") || ok && ae.ErrorFault() == smithy.FaultServer {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
		o.Throttles = append(slices.Clip(o.Throttles), retry.IsErrorThrottleFunc(func(err error) aws.Ternary {
			if cancelledFor(err, "ThrottlingError") {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return quire.Backoff(attempt), nil
		})
	})
}

// throttles are the SDK's codes for throttling.
var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// classify says whether DynamoDB throttled an attempt (with a throttling
// code, or by cancelling a transaction because an item's table or index was
// throttled), or refused it for a conflict with a transaction (a
// single-item write that met one, or a transaction cancelled because
// another was writing its items, which the retryer leaves to the handler, see quire.Retry).
func classify(err error) (throttle, conflict bool) {
	_, single := errors.AsType[*types.TransactionConflictException](err)
	return throttles.IsErrorThrottle(err) == aws.TrueTernary || cancelledFor(err, "ThrottlingError"), single || conflicted(err)
}
