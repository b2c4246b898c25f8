package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/quire"
)

// How the client retries, and how long it waits for DynamoDB. A call makes
// at most MaxAttempts attempts, each of at most AttemptTimeout, with a
// random pause of up to 25 ms × 2^attempt (at most 400 ms) between them; so
// a call that DynamoDB throttles, fails or ignores gives up within about
// 7 s, and sooner when its request's deadline comes first. A write whose
// answer was lost is safe to retry: a transaction's retry carries its
// ClientRequestToken (see tx.commit), and a single-item write's retry finds
// its own content hash (see raced).
const (
	MaxAttempts    = 3
	AttemptTimeout = 2 * time.Second
	baseBackoff    = 25 * time.Millisecond
	MaxBackoff     = 400 * time.Millisecond
)

// retryer is the SDK's standard retryer with MaxAttempts and Quire's
// backoff in place of its default (up to 20 s between attempts, longer than
// a request may take). It also retries a transaction cancelled only because
// it was throttled, as it retries a throttled call (the SDK does not: such a
// cancellation is a TransactionCanceledException, not a throttling error);
// the retry carries the same ClientRequestToken. And it retries a
// single-item write that met a transaction writing its item, which the SDK
// does not either (see transactionConflict).
func retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = MaxAttempts
		o.Retryables = append(slices.Clip(o.Retryables),
			retry.IsErrorRetryableFunc(throttledTransaction), retry.IsErrorRetryableFunc(transactionConflict))
		o.Throttles = append(slices.Clip(o.Throttles), retry.IsErrorThrottleFunc(throttledTransaction))
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			ceiling := min(MaxBackoff, baseBackoff<<min(attempt, 10))
			return rand.N(ceiling) + time.Millisecond, nil
		})
	})
}

// Retryable codes: DynamoDB's throttling, the SDK's retryable status codes
// and connection errors, a transaction DynamoDB cancelled because it was
// throttled, and a single-item write that met a transaction.
var (
	throttles  = retry.IsErrorThrottles(retry.DefaultThrottles)
	retryables = retry.IsErrorRetryables(retry.DefaultRetryables)
)

// classify is the client's outermost middleware: an error that a later try
// may not meet (DynamoDB throttled the call, failed with a server error, did
// not answer in AttemptTimeout, could not be reached, or refused a write
// for a transaction on its item, on every attempt)
// becomes EUNAVAILABLE, which callers see as 503 with Retry-After. A call cut
// short by its request's deadline is left as it is, for rest.Error. It wraps the SDK's error, whose message names the
// operation and the table, for the log; every other error passes as it is.
func classify(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("QuireClassify",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil {
				// A request past its deadline is rest.Error's to answer.
				if unavailable(err) && ctx.Err() == nil {
					op := middleware.GetOperationName(ctx)
					err = quire.Busy(fmt.Errorf("dynamodb %s on %s: %w", op, tableOf(in.Parameters), err))
				}
			}
			return out, md, err
		}), middleware.Before)
}

// unavailable reports whether err is DynamoDB's or the network's passing
// failure (an attempt's timeout included).
func unavailable(err error) bool {
	if _, ok := errors.AsType[*quire.Error](err); ok {
		return false
	}
	if throttled(err) || throttles.IsErrorThrottle(err) == aws.TrueTernary || transactionConflict(err) == aws.TrueTernary {
		return true
	}
	if ae, ok := errors.AsType[smithy.APIError](err); ok && ae.ErrorFault() == smithy.FaultServer {
		return true
	}
	return retryables.IsErrorRetryable(err) == aws.TrueTernary
}

// throttledTransaction says yes to a throttled transaction, and leaves
// any other error to the SDK's own checks.
func throttledTransaction(err error) aws.Ternary {
	if throttled(err) {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// transactionConflict says yes to a PutItem, UpdateItem or DeleteItem that
// DynamoDB refused because a transaction was writing or checking its item
// (TransactionConflictException): nothing was written, and a later try
// finds the transaction done. It leaves any other error to the SDK.
func transactionConflict(err error) aws.Ternary {
	if _, ok := errors.AsType[*types.TransactionConflictException](err); ok {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// throttled reports a transaction that DynamoDB cancelled because an item's
// table or index was throttled, and for no failed condition.
func throttled(err error) bool { return cancelledFor(err, "ThrottlingError") }

// tableOf names the table (or the first of the tables) an operation's input
// is about, for the log.
func tableOf(in any) string {
	if as := Accesses("", in); len(as) > 0 && as[0].Table != "*" {
		return as[0].Table
	}
	return "?"
}
