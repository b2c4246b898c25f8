package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
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
	db     *dynamodb.Client
	table  string
	events string // the outbox
	now    func() time.Time
}

// NewConfigStore returns a ConfigStore on db with the physical table names t.
func NewConfigStore(db *dynamodb.Client, t TableNames) *ConfigStore {
	return &ConfigStore{db: db, table: t.Physical(routes.TableConfig), events: t.Physical(routes.TableEvents), now: time.Now}
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
		return config.Head{}, quire.NotFound("configuration document")
	}
	return parseConfigHead(out.Item)
}

// Current returns the head as Head does: the store keeps no cache.
func (s *ConfigStore) Current(ctx context.Context) (config.Head, error) { return s.Head(ctx) }

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

// Commit writes rep in one transaction: the new head, on the condition that
// the stored head is the one read (or, for a first document, that there is
// none), the new generation's chunks, and the deletion of the old one's,
// while the account of rep.By exists.
func (s *ConfigStore) Commit(ctx context.Context, rep config.Replacement) error {
	d := rep.Document
	chunks := (len(d.Gzip) + chunkBytes - 1) / chunkBytes
	head := map[string]types.AttributeValue{
		attrPK: str(configHead), attrHash: str(d.Hash), "size": num(int64(d.Size)),
		"generation": str(rep.Generation), "chunks": num(int64(chunks)), "gzip_size": num(int64(len(d.Gzip))),
		"updated_at": str(s.now().UTC().Format(time.RFC3339Nano)),
	}
	put := &types.Put{TableName: &s.table, Item: head, ConditionExpression: aws.String("attribute_not_exists(pk)")}
	if !rep.Created {
		put.ConditionExpression = aws.String("#hash = :read")
		put.ExpressionAttributeNames = map[string]string{"#hash": attrHash}
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":read": str(rep.Read.Hash)}
	}
	var t tx
	t = append(t, named{config.StaleHead, types.TransactWriteItem{Put: put}})
	for i := range chunks {
		item := configChunkKey(rep.Generation, i)
		item["n"] = num(int64(i))
		item["data"] = &types.AttributeValueMemberB{Value: d.Gzip[i*chunkBytes : min((i+1)*chunkBytes, len(d.Gzip))]}
		t = append(t, named{"chunk", types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}}})
	}
	for i := range rep.Read.Chunks {
		t = append(t, named{"old chunk", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: configChunkKey(rep.Read.Generation, i)}}})
	}
	t = append(t, published(s.events, rep.Event)...)
	if err := commit(ctx, s.db, t, "", nil); err != nil {
		return fmt.Errorf("put configuration document: %w", err)
	}
	return nil
}
