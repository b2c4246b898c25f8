package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/quire"
)

// Sizes that bound the Query calls of a page: DynamoDB's largest item and
// the data one Query call returns at most.
const (
	maxItemBytes  = 400 << 10
	maxQueryBytes = 1 << 20
)

// maxPageQueries bounds the Query calls of one page of up to 100 items. A
// call stops short only where the next item would take it past 1 MB, so
// every call but the last returns more than 1 MB less one item (over
// 600 KB); the 101 items a page reads hold at most 101 × 400 KB, about
// 40 MB: 64 short calls and the last one.
const maxPageQueries = 101*maxItemBytes/(maxQueryBytes-maxItemBytes) + 1

// queryPage runs in, which must have no filter, for a page of up to limit
// (at most 100) items ordered by id, reading one item more than it returns
// to know whether a next page exists, and parses them; next is the id the
// next page starts after, or 0. A Query call stops at 1 MB: when one
// returns fewer items than asked with a LastEvaluatedKey, queryPage goes
// on from that key, so a page of large items (orders) takes a few calls
// and is never cut short; at most maxPageQueries (65), more is an error.
func queryPage[T any](ctx context.Context, db *dynamodb.Client, in *dynamodb.QueryInput, limit int, parse func(map[string]types.AttributeValue) (*T, error)) ([]T, quire.ID, error) {
	var items []map[string]types.AttributeValue
	for calls := 1; ; calls++ {
		in.Limit = aws.Int32(int32(limit + 1 - len(items)))
		out, err := db.Query(ctx, in)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, out.Items...)
		if len(items) > limit || out.LastEvaluatedKey == nil {
			break
		}
		if calls == maxPageQueries {
			return nil, 0, fmt.Errorf("query a page of %d items: %d items after %d calls", limit, len(items), calls)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	var next quire.ID
	if len(items) > limit {
		items = items[:limit]
		var r reader
		if next = quire.ID(r.num(items[limit-1], attrID)); r.err != nil {
			return nil, 0, r.err
		}
	}
	vs, err := parseAll(items, parse)
	return vs, next, err
}

// parseAll parses every item with parse.
func parseAll[T any](items []map[string]types.AttributeValue, parse func(map[string]types.AttributeValue) (*T, error)) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, item := range items {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}
