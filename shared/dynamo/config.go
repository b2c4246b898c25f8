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
// of a chunk another may still read or delete.
//
// A replacement writes the new chunks and the new head in one transaction,
// conditioned on the head's hash as read (at most 7 items: DynamoDB takes
// 100, the DynamoDB Local Quire runs on 10), then deletes the old
// generation's chunks. The head keeps the generation it replaced until the
// next write, which deletes its chunks again: a function that stops between
// the commit and the deletion leaves nothing behind for long.
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

// generation is where a document's chunks are and how many there are.
type generation struct {
	id     string
	chunks int
}

// Head returns the head of the stored document, read consistently, or
// ENOTFOUND.
func (s *ConfigStore) Head(ctx context.Context) (config.Head, error) {
	h, _, err := s.head(ctx)
	return h, err
}

// head reads the head item: the head, and the generation it replaced
// (empty when none is left to delete); ENOTFOUND when there is none.
func (s *ConfigStore) head(ctx context.Context) (config.Head, generation, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: map[string]types.AttributeValue{attrPK: str(configHead)}, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return config.Head{}, generation{}, fmt.Errorf("get configuration head: %w", err)
	}
	if out.Item == nil {
		return config.Head{}, generation{}, quire.Errorf(quire.ENOTFOUND, "No configuration document is stored yet; an admin stores one with PUT /admin/config.")
	}
	return parseConfigHead(out.Item)
}

// parseConfigHead reads a head item.
func parseConfigHead(item map[string]types.AttributeValue) (config.Head, generation, error) {
	var r reader
	h := config.Head{
		Hash: r.str(item, attrHash), Size: int(r.num(item, "size")),
		Generation: r.str(item, "generation"), Chunks: int(r.num(item, "chunks")),
	}
	var replaced generation
	if _, ok := item["replaced"]; ok {
		replaced = generation{r.str(item, "replaced"), int(r.num(item, "replaced_chunks"))}
	}
	if r.err != nil {
		return config.Head{}, generation{}, fmt.Errorf("read configuration head: %w", r.err)
	}
	return h, replaced, nil
}

// Gzip reads the chunks of the document h names in BatchGetItem requests,
// consistently, and joins them: config.ErrReplaced when one is gone.
func (s *ConfigStore) Gzip(ctx context.Context, h config.Head) ([]byte, error) {
	n := h.Chunks
	keys := make([]map[string]types.AttributeValue, n)
	for i := range keys {
		keys[i] = configChunkKey(h.Generation, i)
	}
	items, err := batchGet(ctx, s.db, s.table, "configuration", keys)
	if err != nil {
		return nil, err
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
	var z []byte
	for _, p := range parts {
		if p == nil {
			return nil, config.ErrReplaced
		}
		z = append(z, p...)
	}
	return z, nil
}

// Put stores d over the stored document: the new chunks and the new head in
// one transaction, on the condition that the stored hash is still the one
// read and checked against pre; then it deletes the chunks of the
// generations the new head replaced. A head changed in between is read
// again, and checked against pre again. Storing the document that is
// stored already writes nothing.
func (s *ConfigStore) Put(ctx context.Context, d config.Document, pre quire.Precondition) (created bool, err error) {
	for attempt := 1; ; attempt++ {
		// stale: a generation left by a write that stopped before deleting it
		old, stale, err := s.head(ctx)
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
		gen := generation{newGeneration(), (len(d.Gzip) + chunkBytes - 1) / chunkBytes}
		head := map[string]types.AttributeValue{
			attrPK: str(configHead), attrHash: str(d.Hash), "size": num(int64(d.Size)),
			"generation": str(gen.id), "chunks": num(int64(gen.chunks)), "gzip_size": num(int64(len(d.Gzip))),
			"updated_at": str(s.now().UTC().Format(time.RFC3339Nano)),
		}
		put := &types.Put{TableName: &s.table, Item: head, ConditionExpression: aws.String("attribute_not_exists(pk)")}
		if exists {
			head["replaced"], head["replaced_chunks"] = str(old.Generation), num(int64(old.Chunks))
			put.ConditionExpression = aws.String("#hash = :old_hash")
			put.ExpressionAttributeNames = map[string]string{"#hash": attrHash}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":old_hash": str(old.Hash)}
		}
		items := []types.TransactWriteItem{{Put: put}}
		for i := range gen.chunks {
			item := configChunkKey(gen.id, i)
			item["n"] = num(int64(i))
			item["data"] = &types.AttributeValueMemberB{Value: d.Gzip[i*chunkBytes : min((i+1)*chunkBytes, len(d.Gzip))]}
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}})
		}
		err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		switch {
		case err == nil:
			return !exists, s.deleteChunks(ctx, stale, generation{old.Generation, old.Chunks})
		case !cancelled(err)[0]:
			return false, fmt.Errorf("put configuration document: %w", err)
		case attempt == maxChangeAttempts:
			return false, quire.Errorf(quire.ECONFLICT, "The configuration document changed during the request; retry it.")
		}
		// Another writer won: read the head again; pre decides.
		if err := pause(ctx, attempt); err != nil {
			return false, err
		}
	}
}

// deleteChunks deletes the chunks of generations no head names any more,
// in BatchWriteItem requests of up to 25 deletions.
func (s *ConfigStore) deleteChunks(ctx context.Context, gens ...generation) error {
	var deletes []types.WriteRequest
	for _, g := range gens {
		for i := range g.chunks {
			deletes = append(deletes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: configChunkKey(g.id, i)}})
		}
	}
	for attempt := 1; len(deletes) > 0; attempt++ {
		batch := deletes[:min(25, len(deletes))]
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: batch}})
		if err != nil {
			return fmt.Errorf("delete replaced configuration chunks: %w", err)
		}
		deletes = append(out.UnprocessedItems[s.table], deletes[len(batch):]...)
		if len(out.UnprocessedItems[s.table]) > 0 {
			if attempt == maxWriteAttempts {
				return fmt.Errorf("delete replaced configuration chunks: %d left unprocessed", len(deletes))
			}
			if err := pause(ctx, attempt); err != nil {
				return err
			}
		}
	}
	return nil
}

// newGeneration returns a random generation id.
func newGeneration() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
