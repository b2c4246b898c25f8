package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/quireapi/quire/internal/routes"
)

// Access is one action IAM authorizes for a call: the action on a table,
// or on one of its indexes.
type Access struct {
	Action string // such as "dynamodb:GetItem"
	Table  string // the table's physical name
	Index  string // the index's name; "" for the table itself
}

// Accesses returns what IAM authorizes for a call of DynamoDB's operation
// op with input in, as AWS does: a single-item call, a Query or a Scan as
// its own action on its table (a Query or Scan of an index, on the index);
// a batch as its action on each table it names; each item of a
// transaction as its single-item action (a ConditionCheck as
// dynamodb:ConditionCheckItem, a TransactGetItems item as
// dynamodb:GetItem). Any other operation is its own action on a resource
// of "*".
func Accesses(op string, in any) []Access {
	on := func(action string, table *string) Access {
		return Access{Action: "dynamodb:" + action, Table: aws.ToString(table)}
	}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		return []Access{on(op, in.TableName)}
	case *dynamodb.PutItemInput:
		return []Access{on(op, in.TableName)}
	case *dynamodb.UpdateItemInput:
		return []Access{on(op, in.TableName)}
	case *dynamodb.DeleteItemInput:
		return []Access{on(op, in.TableName)}
	case *dynamodb.QueryInput:
		a := on(op, in.TableName)
		a.Index = aws.ToString(in.IndexName)
		return []Access{a}
	case *dynamodb.ScanInput:
		a := on(op, in.TableName)
		a.Index = aws.ToString(in.IndexName)
		return []Access{a}
	case *dynamodb.BatchGetItemInput:
		var out []Access
		for t := range in.RequestItems {
			out = append(out, on(op, &t))
		}
		return out
	case *dynamodb.BatchWriteItemInput:
		var out []Access
		for t := range in.RequestItems {
			out = append(out, on(op, &t))
		}
		return out
	case *dynamodb.TransactWriteItemsInput:
		var out []Access
		for _, it := range in.TransactItems {
			switch {
			case it.ConditionCheck != nil:
				out = append(out, on("ConditionCheckItem", it.ConditionCheck.TableName))
			case it.Put != nil:
				out = append(out, on("PutItem", it.Put.TableName))
			case it.Update != nil:
				out = append(out, on("UpdateItem", it.Update.TableName))
			case it.Delete != nil:
				out = append(out, on("DeleteItem", it.Delete.TableName))
			}
		}
		return out
	case *dynamodb.TransactGetItemsInput:
		var out []Access
		for _, it := range in.TransactItems {
			if it.Get != nil {
				out = append(out, on("GetItem", it.Get.TableName))
			}
		}
		return out
	}
	return []Access{{Action: "dynamodb:" + op, Table: "*"}}
}

// deniedKey keeps, in a call's context, the message of the access its role
// denies it.
type deniedKey struct{}

// Enforce returns an option that holds a client to the role the stack gives
// g's function, where AWS's IAM does not hold it (DynamoDB Local checks no
// permission at all): a call that takes an action g.Allows does not allow
// (see Accesses) is answered without reaching DynamoDB, as AWS answers it,
// HTTP 400 AccessDeniedException naming the action and the resource. The
// SDK reads that answer as it reads AWS's: an error no retry fixes, which
// Quire answers 500 and logs. tables maps the logical names g's grants use
// to the physical ones calls name. sent, when not nil, is told each access
// the role allowed, on logical names: what the function sends.
func Enforce(g routes.Group, tables TableNames, sent func(Access)) func(*dynamodb.Options) {
	logical := map[string]string{}
	for _, t := range Tables() {
		logical[tables.Physical(t.Name)] = t.Name
	}
	return func(o *dynamodb.Options) {
		region := o.Region
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("QuireIAM",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					accesses := Accesses(middleware.GetOperationName(ctx), in.Parameters)
					for i, a := range accesses {
						t, ok := logical[a.Table]
						if !ok || !g.Allows(a.Action, t, a.Index != "") {
							ctx = middleware.WithStackValue(ctx, deniedKey{}, Denial(g.Name, region, a))
							return next.HandleInitialize(ctx, in)
						}
						accesses[i].Table = t
					}
					for _, a := range accesses { // only a call the role allows whole, as memstore.DB.may tells
						if sent != nil {
							sent(a)
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
			if err != nil {
				return err
			}
			// Innermost: the answer takes the place of DynamoDB's, and the
			// operation's own deserializer reads it.
			return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("QuireIAMDenied",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					msg, _ := middleware.GetStackValue(ctx, deniedKey{}).(string)
					if msg == "" {
						return next.HandleDeserialize(ctx, in)
					}
					body, err := json.Marshal(map[string]string{"__type": "com.amazon.coral.service#AccessDeniedException", "Message": msg})
					if err != nil {
						return middleware.DeserializeOutput{}, middleware.Metadata{}, err
					}
					resp := &http.Response{
						StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
						Header: http.Header{
							"Content-Type":     {"application/x-amz-json-1.0"},
							"X-Amzn-Requestid": {"QUIREIAMDENIED"},
						},
						ContentLength: int64(len(body)),
						Body:          io.NopCloser(strings.NewReader(string(body))),
					}
					return middleware.DeserializeOutput{RawResponse: &smithyhttp.Response{Response: resp}}, middleware.Metadata{}, nil
				}), middleware.After)
		})
	}
}

// Denial is AWS's message for an access the role of group's function does
// not allow, in an account of zeros.
func Denial(group, region string, a Access) string {
	resource := "*"
	if a.Table != "*" {
		resource = fmt.Sprintf("arn:aws:dynamodb:%s:000000000000:table/%s", region, a.Table)
		if a.Index != "" {
			resource += "/index/" + a.Index
		}
	}
	return fmt.Sprintf("User: arn:aws:sts::000000000000:assumed-role/quire-%s/quire-%s is not authorized to perform: %s on resource: %s "+
		"because no identity-based policy allows the %s action", group, group, a.Action, resource, a.Action)
}
