package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/telemetry"
)

// observe is the client's middleware that adds each call to its request's
// telemetry.Record: the call, its retries, the attempts DynamoDB throttled
// or refused for a conflict with a transaction, and the capacity units it
// consumed, which it asks DynamoDB to return (a figure in the answer, at
// no cost). A call outside a request (none in its context) is left alone.
func observe(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("QuireTelemetry",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			rec := telemetry.FromContext(ctx)
			if rec == nil {
				return next.HandleInitialize(ctx, in)
			}
			askCapacity(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			d := telemetry.DynamoDB{Calls: 1, Units: consumed(out.Result)}
			attempts, ok := retry.GetAttemptResults(md)
			if !ok { // no retry middleware ran: the call's one error is its only attempt's
				attempts.Results = []retry.AttemptResult{{Err: err}}
			}
			for i, a := range attempts.Results {
				if i > 0 {
					d.Retries++
				}
				switch {
				case a.Err == nil:
				case throttled(a.Err) || throttles.IsErrorThrottle(a.Err) == aws.TrueTernary:
					d.Throttles++
				case conflicted(a.Err) || transactionConflict(a.Err) == aws.TrueTernary:
					d.Conflicts++
				}
			}
			rec.AddDynamoDB(d)
			return out, md, err
		}), middleware.Before)
}

// askCapacity asks for the total capacity an operation consumes.
func askCapacity(in any) {
	const total = types.ReturnConsumedCapacityTotal
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumed sums the capacity units an operation's output reports.
func consumed(out any) float64 {
	one := func(c *types.ConsumedCapacity) float64 {
		if c == nil {
			return 0
		}
		return aws.ToFloat64(c.CapacityUnits)
	}
	many := func(cs []types.ConsumedCapacity) (sum float64) {
		for i := range cs {
			sum += one(&cs[i])
		}
		return sum
	}
	switch out := out.(type) {
	case *dynamodb.GetItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return many(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return many(out.ConsumedCapacity)
	case *dynamodb.TransactGetItemsOutput:
		return many(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return many(out.ConsumedCapacity)
	}
	return 0
}
