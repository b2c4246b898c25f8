package telemetry

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
)

// ObserveDynamoDB returns a DynamoDB client's middleware that adds each
// call to its request's Record: the call, its retries, the attempts that
// classify says DynamoDB throttled or refused for a conflict with a
// transaction, and the capacity units it consumed, which it asks DynamoDB
// to return (a figure in the answer, at no cost). A call outside a request
// (no Record in its context) is left alone. classify is called only for an
// attempt that failed. A call's error names the operation and its table,
// for the request's line.
func ObserveDynamoDB(classify func(error) (throttled, conflicted bool)) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("QuireTelemetry",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				rec := FromContext(ctx)
				if rec == nil {
					return next.HandleInitialize(ctx, in)
				}
				askCapacity(in.Parameters)
				out, md, err := next.HandleInitialize(ctx, in)
				d := DynamoDB{Calls: 1, Units: consumed(out.Result)}
				attempts, ok := retry.GetAttemptResults(md)
				if !ok { // no retry middleware ran: the call's one error is its only attempt's
					attempts.Results = []retry.AttemptResult{{Err: err}}
				}
				for i, a := range attempts.Results {
					if i > 0 {
						d.Retries++
					}
					if a.Err == nil {
						continue
					}
					switch throttled, conflicted := classify(a.Err); {
					case throttled:
						d.Throttles++
					case conflicted:
						d.Conflicts++
					}
				}
				rec.AddDynamoDB(d)
				if err != nil {
					err = fmt.Errorf("dynamodb %s%s: %w", middleware.GetOperationName(ctx), tableOf(in.Parameters), err)
				}
				return out, md, err
			}), middleware.Before)
	}
}

// askCapacity asks for the total capacity the operation of input in
// consumes: every DynamoDB input that can report it has a
// ReturnConsumedCapacity field, which this sets by reflection, so that
// what links telemetry does not link DynamoDB's client.
func askCapacity(in any) {
	if f := field(in, "ReturnConsumedCapacity"); f.IsValid() && f.Kind() == reflect.String {
		f.SetString("TOTAL")
	}
}

// consumed sums the capacity units in the ConsumedCapacity of an
// operation's output: one (a pointer) or one per table (a slice).
func consumed(out any) (units float64) {
	f := field(out, "ConsumedCapacity")
	one := func(c reflect.Value) {
		if u := c.FieldByName("CapacityUnits"); u.IsValid() && !u.IsNil() {
			units += u.Elem().Float()
		}
	}
	switch {
	case !f.IsValid():
	case f.Kind() == reflect.Pointer && !f.IsNil():
		one(f.Elem())
	case f.Kind() == reflect.Slice:
		for i := range f.Len() {
			one(f.Index(i))
		}
	}
	return units
}

// tableOf names the table of an operation's input, for the log (" on
// users"), or nothing for one on many tables.
func tableOf(in any) string {
	if f := field(in, "TableName"); f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
		return " on " + f.Elem().String()
	}
	return ""
}

// field is the field name of the struct v points to, or the zero Value.
func field(v any, name string) reflect.Value {
	p := reflect.ValueOf(v)
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return p.Elem().FieldByName(name)
}
