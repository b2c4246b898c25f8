package dynamotest

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Counter records the DynamoDB operations a client calls and the capacity
// they consume, by SDK middleware that asks for it: pass Option to the
// client, and Take what it counted.
type Counter struct {
	mu       sync.Mutex
	ops      []string
	capacity float64
}

// Option is the client option that counts.
func (c *Counter) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("CountRequests",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				total := types.ReturnConsumedCapacityTotal
				switch p := in.Parameters.(type) {
				case *dynamodb.GetItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.QueryInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.BatchGetItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.PutItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.UpdateItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.TransactWriteItemsInput:
					p.ReturnConsumedCapacity = total
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var used []types.ConsumedCapacity
				switch r := out.Result.(type) {
				case *dynamodb.GetItemOutput:
					used = append(used, ptrs(r.ConsumedCapacity)...)
				case *dynamodb.QueryOutput:
					used = append(used, ptrs(r.ConsumedCapacity)...)
				case *dynamodb.BatchGetItemOutput:
					used = r.ConsumedCapacity
				case *dynamodb.PutItemOutput:
					used = append(used, ptrs(r.ConsumedCapacity)...)
				case *dynamodb.UpdateItemOutput:
					used = append(used, ptrs(r.ConsumedCapacity)...)
				case *dynamodb.TransactWriteItemsOutput:
					used = r.ConsumedCapacity
				}
				c.mu.Lock()
				c.ops = append(c.ops, awsmiddleware.GetOperationName(ctx))
				for _, u := range used {
					c.capacity += aws.ToFloat64(u.CapacityUnits)
				}
				c.mu.Unlock()
				return out, md, err
			}), middleware.After)
	})
}

func ptrs(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// Take returns the operations and capacity units counted since the last
// Take, and starts again.
func (c *Counter) Take() ([]string, float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops, capacity := c.ops, c.capacity
	c.ops, c.capacity = nil, 0
	return ops, capacity
}
