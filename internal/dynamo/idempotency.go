package dynamo

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/routes"
)

// RecordStore keeps idempotency records in the idempotency table, one item
// per scope, which DynamoDB deletes after expires_at. An item past its
// expiry counts as absent before DynamoDB gets to it.
type RecordStore struct {
	db    *dynamodb.Client
	table string
	ttl   time.Duration
	now   func() time.Time
}

// NewRecordStore returns a RecordStore on db with the physical table names
// t, keeping records for ttl.
func NewRecordStore(db *dynamodb.Client, t TableNames, ttl time.Duration) *RecordStore {
	if ttl <= 0 {
		ttl = idempotency.DefaultTTL
	}
	return &RecordStore{db: db, table: t.Physical(routes.TableIdempotency), ttl: ttl, now: time.Now}
}

const attrExpiresAt = "expires_at"

// The response headers a record keeps: those a replay must send again.
var recordedHeaders = []string{"Content-Type", "Location", "Link", "Cache-Control"}

// Get reads the record of scope, consistently.
func (s *RecordStore) Get(ctx context.Context, scope string) (*idempotency.Record, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: map[string]types.AttributeValue{attrPK: str(scope)}, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get idempotency record: %w", err)
	}
	if out.Item == nil {
		return nil, nil
	}
	var r reader
	rec := &idempotency.Record{
		Scope:       scope,
		Fingerprint: r.str(out.Item, "fingerprint"),
		Expires:     time.Unix(r.num(out.Item, attrExpiresAt), 0),
		Response:    idempotency.Response{Status: int(r.num(out.Item, "status")), Header: http.Header{}},
	}
	if b, ok := out.Item["body"].(*types.AttributeValueMemberB); ok {
		rec.Body = b.Value
	}
	if m, ok := out.Item["header"].(*types.AttributeValueMemberM); ok {
		for name := range m.Value {
			http.Header(rec.Header).Set(name, r.str(m.Value, name))
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("read idempotency record: %w", r.err)
	}
	if !rec.Expires.After(s.now()) {
		return nil, nil
	}
	return rec, nil
}

// Begin returns the pending record of scope, expiring after the store's
// time to live.
func (s *RecordStore) Begin(scope, fingerprint string) *idempotency.Pending {
	return &idempotency.Pending{Scope: scope, Fingerprint: fingerprint, Expires: s.now().Add(s.ttl)}
}

// recordItem is the Put of rec into table in a transaction: it succeeds
// only when the scope has no record, or an expired one.
func recordItem(table string, rec *idempotency.Record, now time.Time) types.TransactWriteItem {
	header := map[string]types.AttributeValue{}
	for _, name := range recordedHeaders {
		if v := http.Header(rec.Header).Get(name); v != "" {
			header[name] = str(v)
		}
	}
	item := map[string]types.AttributeValue{
		attrPK:        str(rec.Scope),
		"fingerprint": str(rec.Fingerprint),
		"status":      num(int64(rec.Status)),
		"header":      &types.AttributeValueMemberM{Value: header},
		attrExpiresAt: num(rec.Expires.Unix()),
		"created_at":  str(now.UTC().Format(time.RFC3339Nano)),
	}
	if len(rec.Body) > 0 {
		item["body"] = &types.AttributeValueMemberB{Value: rec.Body}
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                 &table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR " + attrExpiresAt + " <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
	}}
}
