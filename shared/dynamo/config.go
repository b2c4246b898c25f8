package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/config"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
)

// ConfigStore keeps the configuration document in the config table: a head
// item, "config", with the document's content hash, size, and the
// generation and number of its chunks, and the compressed document in
// chunks of at most chunkBytes, "config#<generation>#<n>", each its own
// item. Every write draws a new generation, so no write ever reuses the key
// of a chunk another may still read.
//
// A replacement is one transaction: the new head, conditioned on the
// head's hash as read, the new chunks, and the deletion of the old
// generation's chunks. It commits whole or not at all: a PUT that succeeds
// has removed every old chunk, and one that fails or stops midway has
// changed nothing, so there is no cleanup to fail, to retry or to remember.
// That is simpler than deleting the old chunks after the commit, which
// needs the head to name them until a later write deletes them again. It
// fits: a 2 MiB document is at most 6 chunks, so the transaction holds at
// most 13 items and about 2.3 MB (a deletion adds only its key), within
// DynamoDB's 100 items and 4 MB. (Quire deleted after the commit for a
// while, when its DynamoDB Local took 10 items per transaction; no release
// did, so no stored head names chunks left to delete.)
type ConfigStore struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// NewConfigStore returns a ConfigStore on db with the physical table names t.
func NewConfigStore(db *dynamodb.Client, t TableNames) *ConfigStore {
	return &ConfigStore{db: db, table: t.Physical(routes.TableConfig), now: time.Now}
}

// chunkBytes is the most a chunk item holds: DynamoDB's items are at most
// 400 KB, key and attribute names included.
const chunkBytes = 380 << 10

const configHead = "config"

func configChunkKey(generation string, n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(configHead + "#" + generation + "#" + strconv.Itoa(n))}
}

// Head returns the head of the stored document, read consistently, or
// ENOTFOUND. The config handlers hold what it returns for up to
// config.Staleness, so a warm instance reads it at most once in that time.
func (s *ConfigStore) Head(ctx context.Context) (config.Head, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: map[string]types.AttributeValue{attrPK: str(configHead)}, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return config.Head{}, fmt.Errorf("get configuration head: %w", err)
	}
	if out.Item == nil {
		return config.Head{}, quire.Errorf(quire.ENOTFOUND, "No configuration document is stored yet; an admin stores one with PUT /admin/config.")
	}
	return parseConfigHead(out.Item)
}

// parseConfigHead reads a head item.
func parseConfigHead(item map[string]types.AttributeValue) (config.Head, error) {
	var r reader
	h := config.Head{
		Hash: r.str(item, attrHash), Size: int(r.num(item, "size")),
		Generation: r.str(item, "generation"), Chunks: int(r.num(item, "chunks")),
	}
	if r.err != nil {
		return config.Head{}, fmt.Errorf("read configuration head: %w", r.err)
	}
	return h, nil
}

// Gzip reads the chunks of the document h names in BatchGetItem requests
// and joins them: config.ErrReplaced when one is gone. A chunk never changes
// once written (a replacement writes a new generation), so it is read
// eventually consistent, at half the read units; one that such a read does
// not see yet, just after its write, is read again consistently.
func (s *ConfigStore) Gzip(ctx context.Context, h config.Head) ([]byte, error) {
	n := h.Chunks
	keys := make([]map[string]types.AttributeValue, n)
	for i := range keys {
		keys[i] = configChunkKey(h.Generation, i)
	}
	got, err := batchGetTables(ctx, s.db, "configuration", map[string]types.KeysAndAttributes{s.table: {Keys: keys}})
	if err != nil {
		return nil, err
	}
	items := got[s.table]
	if len(items) < n {
		seen := map[string]bool{}
		for _, item := range items {
			seen[pkOf(item)] = true
		}
		var missing []map[string]types.AttributeValue
		for _, k := range keys {
			if !seen[pkOf(k)] {
				missing = append(missing, k)
			}
		}
		more, err := batchGet(ctx, s.db, s.table, "configuration", missing)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
	}
	parts := make([][]byte, n)
	for _, item := range items {
		var r reader
		i := int(r.num(item, "n"))
		b, ok := item["data"].(*types.AttributeValueMemberB)
		if r.err != nil || !ok || i < 0 || i >= n {
			return nil, fmt.Errorf("read configuration chunk %v: malformed", item[attrPK])
		}
		parts[i] = b.Value
	}
	size := 0
	for _, p := range parts {
		if p == nil {
			return nil, config.ErrReplaced
		}
		size += len(p)
	}
	z := make([]byte, 0, size) // exactly: the config handlers hold it
	for _, p := range parts {
		z = append(z, p...)
	}
	return z, nil
}

// Put stores d over the stored document in one transaction: the new head,
// on the condition that the stored hash is still the one read and checked
// against pre, the new chunks, and the deletion of the old ones. A head
// changed in between is read again, and checked against pre again.
// Storing the document that is stored already writes nothing.
func (s *ConfigStore) Put(ctx context.Context, d config.Document, pre quire.Precondition) (created bool, err error) {
	for attempt := 1; ; attempt++ {
		old, err := s.Head(ctx)
		exists := err == nil
		if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
			return false, err
		}
		if err := pre.Check(old.Hash); err != nil {
			return false, err
		}
		if exists && old.Hash == d.Hash {
			return false, nil
		}
		gen := newGeneration()
		chunks := (len(d.Gzip) + chunkBytes - 1) / chunkBytes
		head := map[string]types.AttributeValue{
			attrPK: str(configHead), attrHash: str(d.Hash), "size": num(int64(d.Size)),
			"generation": str(gen), "chunks": num(int64(chunks)), "gzip_size": num(int64(len(d.Gzip))),
			"updated_at": str(s.now().UTC().Format(time.RFC3339Nano)),
		}
		put := &types.Put{TableName: &s.table, Item: head, ConditionExpression: aws.String("attribute_not_exists(pk)")}
		if exists {
			put.ConditionExpression = aws.String("#hash = :old_hash")
			put.ExpressionAttributeNames = map[string]string{"#hash": attrHash}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":old_hash": str(old.Hash)}
		}
		items := []types.TransactWriteItem{{Put: put}}
		for i := range chunks {
			item := configChunkKey(gen, i)
			item["n"] = num(int64(i))
			item["data"] = &types.AttributeValueMemberB{Value: d.Gzip[i*chunkBytes : min((i+1)*chunkBytes, len(d.Gzip))]}
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}})
		}
		for i := range old.Chunks {
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: configChunkKey(old.Generation, i)}})
		}
		err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		switch {
		case err == nil:
			return !exists, nil
		case !cancelled(err)[0]:
			return false, fmt.Errorf("put configuration document: %w", err)
		case attempt == maxChangeAttempts:
			return false, quire.Errorf(quire.ECONFLICT, "The configuration document changed during the request; retry it.")
		}
		// Another writer won: read the head again; pre decides.
		if err := quire.Pause(ctx, attempt); err != nil {
			return false, err
		}
	}
}

// newGeneration returns a random generation id.
func newGeneration() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
