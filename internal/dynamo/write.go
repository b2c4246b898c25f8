package dynamo

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
)

// maxBatchAttempts bounds the requests of a batch whose keys DynamoDB
// leaves unprocessed: each after quire.Backoff.
const maxBatchAttempts = 5

// DeleteKeys deletes the items of keys from table (see BatchWrite).
func DeleteKeys(ctx context.Context, db *dynamodb.Client, table string, keys []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, key := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key}}
	}
	return BatchWrite(ctx, db, table, reqs)
}

// BatchWrite makes the writes reqs to table, in BatchWriteItem requests of
// up to 25, each sent again, after a quire.Pause, for the writes DynamoDB
// leaves unprocessed, at most maxBatchAttempts times.
func BatchWrite(ctx context.Context, db *dynamodb.Client, table string, reqs []types.WriteRequest) error {
	for batch := range slices.Chunk(reqs, 25) {
		for attempt := 1; len(batch) > 0; attempt++ {
			res, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: batch}})
			if err != nil {
				return err
			}
			if batch = res.UnprocessedItems[table]; len(batch) == 0 {
				break
			}
			if attempt == maxBatchAttempts {
				return fmt.Errorf("%d left unprocessed", len(batch))
			}
			if err := quire.Pause(ctx, attempt); err != nil {
				return err
			}
		}
	}
	return nil
}

// tx is a transaction whose items are known by name ("buyer", "cart"): a
// cancelled one says by name, not by position, what was not as read. A
// store builds it as a slice, and commits it with commit.
type tx []named

// named is an item of a transaction, by name.
type named struct {
	name string
	item types.TransactWriteItem
}

// recordName names the Put of an idempotency record in a transaction.
const recordName = "idempotency record"

// commit runs t, with rec's Put into the records table when rec is set.
// When DynamoDB cancels it only because another transaction was writing
// the same items, it returns quire.ErrCollided, for the handler to read,
// decide and commit again (see quire.Retry). When it cancels it because an
// item's condition failed, it returns a *quire.Stale naming the first such
// item; for the record, idempotency.ErrRaced (another request with the key
// committed first), and idempotency.ErrInFlight when that request is
// committing at the same time.
//
// It carries a ClientRequestToken of its own, which the SDK's retries
// repeat: when DynamoDB applied a transaction and its answer was lost on
// the way back, the retry is answered as the first run was and applies
// nothing again (DynamoDB keeps tokens for 10 minutes, far longer than a
// request lives).
func commit(ctx context.Context, db *dynamodb.Client, t tx, records string, rec *idempotency.Record) error {
	if rec != nil {
		t = append(t, named{recordName, recordItem(records, rec, time.Now())})
	}
	items := make([]types.TransactWriteItem, len(t))
	for i, n := range t {
		items[i] = n.item
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: items, ClientRequestToken: aws.String(requestToken()),
	})
	if err == nil {
		return nil
	}
	reasons := map[string]string{} // of each item, by name: the first
	if tce, ok := errors.AsType[*types.TransactionCanceledException](err); ok {
		for i, r := range tce.CancellationReasons {
			if i < len(t) && reasons[t[i].name] == "" {
				reasons[t[i].name] = aws.ToString(r.Code)
			}
		}
	}
	switch reasons[recordName] {
	case "ConditionalCheckFailed": // the key has a record now
		return idempotency.ErrRaced
	case "TransactionConflict": // the key's first request is committing
		return idempotency.ErrInFlight
	}
	for _, n := range t {
		if reasons[n.name] == "ConditionalCheckFailed" {
			return &quire.Stale{What: n.name}
		}
	}
	if conflicted(err) {
		return fmt.Errorf("%w: %w", quire.ErrCollided, err)
	}
	return err
}

// requestToken returns a new ClientRequestToken: 128 random bits.
func requestToken() string {
	var b [16]byte
	crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// conflicted reports whether err is a transaction cancelled for a conflict
// with another transaction, with no condition failing.
func conflicted(err error) bool { return cancelledFor(err, "TransactionConflict") }

// cancelledFor reports whether err is a transaction cancelled because of
// reason (a cancellation reason's code) for some item, and no item failed
// its condition.
func cancelledFor(err error, reason string) bool {
	tce, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		return false
	}
	found := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case reason:
			found = true
		case "ConditionalCheckFailed":
			return false
		}
	}
	return found
}

// raced inspects the error of a single-item write conditioned on the content
// hash it read, which sets the hash to written and asks for the item back
// when its condition fails (ReturnValuesOnConditionCheckFailure ALL_OLD).
// lost reports that the condition failed, with the item as DynamoDB holds it
// now in current (nil when it is gone); applied reports that the item holds
// written already: the write landed, its answer was lost, and the SDK's retry
// met the write itself. A PUT is then done, whoever sent the content.
func raced(err error, written string) (current map[string]types.AttributeValue, applied, lost bool) {
	ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err)
	if !ok {
		return nil, false, false
	}
	return ccf.Item, ccf.Item != nil && hashOf(ccf.Item) == written, true
}

// conditioned is the outcome of a single-item write conditioned on the
// content hash it read, which set the hash to written (see raced): nil when
// it landed, even if its answer was lost; a *quire.Stale naming stale when
// another write came first; else err, wrapped with what was being done
// (format and args, formatted only then).
func conditioned(err error, written, stale, format string, args ...any) error {
	switch _, applied, lost := raced(err, written); {
	case applied:
		return nil
	case lost:
		return &quire.Stale{What: stale}
	case err != nil:
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return nil
}

// hashOf returns the content hash of a stored item, "" for none.
func hashOf(item map[string]types.AttributeValue) string {
	v, _ := item[attrHash].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// batchGet reads keys from table, consistently (see batchGetTables).
// Keys with no item are missing from what it returns.
func batchGet(ctx context.Context, db *dynamodb.Client, table, what string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	items, err := batchGetTables(ctx, db, what, map[string]types.KeysAndAttributes{
		table: {Keys: keys, ConsistentRead: aws.Bool(true)},
	})
	return items[table], err
}

// batchGetTables reads request's keys in BatchGetItem requests: again,
// after a pause, for keys DynamoDB leaves unprocessed, and EUNAVAILABLE
// (naming what, "the catalog") when some are left after maxBatchAttempts.
// It returns the items of each table; keys with no item have none.
func batchGetTables(ctx context.Context, db *dynamodb.Client, what string, request map[string]types.KeysAndAttributes) (map[string][]map[string]types.AttributeValue, error) {
	items := map[string][]map[string]types.AttributeValue{}
	for attempt := 1; len(request) > 0; attempt++ {
		out, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", what, err)
		}
		for t, got := range out.Responses {
			items[t] = append(items[t], got...)
		}
		if request = out.UnprocessedKeys; len(request) == 0 {
			break
		}
		if attempt == maxBatchAttempts {
			return nil, quire.Busy(fmt.Errorf("get %s: keys left unprocessed after %d requests", what, attempt))
		}
		if err := quire.Pause(ctx, attempt); err != nil {
			return nil, err
		}
	}
	return items, nil
}
