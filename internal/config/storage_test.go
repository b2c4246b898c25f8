package config_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// onlyHeadChunks fails the test unless the config table holds the head and
// exactly the chunks of the generation it names: no chunk of a replaced
// generation, or of a write that did not commit, is left. It returns the
// number of chunks. On memory, which keeps no chunks, it checks nothing and
// returns 0.
func onlyHeadChunks(t *testing.T, api *servicetest.API) int {
	t.Helper()
	if api.DB == nil {
		return 0
	}
	table := api.Tables.Physical(routes.TableConfig)
	var keys []string
	var head map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: &table}
	for {
		out, err := api.DB.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			pk := item["pk"].(*types.AttributeValueMemberS).Value
			if pk == "config" {
				head = item
				continue
			}
			keys = append(keys, pk)
		}
		if in.ExclusiveStartKey = out.LastEvaluatedKey; in.ExclusiveStartKey == nil {
			break
		}
	}
	if head == nil {
		t.Fatalf("no head in the config table; other items: %v", keys)
	}
	gen := head["generation"].(*types.AttributeValueMemberS).Value
	n, _ := strconv.Atoi(head["chunks"].(*types.AttributeValueMemberN).Value)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("config#%s#%d", gen, i))
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("chunks in the config table %v; want only the head's generation: %v", keys, want)
	}
	return n
}

// noise returns a compact JSON object of size bytes that gzip keeps 97%
// of, more than of random(size): its string holds random UTF-8 sequences
// of every length, drawn so that its bytes spread evenly over all the
// values UTF-8 text uses. At 2 MiB it takes 6 chunks, the most a document
// can.
func noise(size int) string {
	var b strings.Builder
	b.WriteString(`{"noise":"`)
	for b.Len() < size-2-4 {
		c := byte(0x20 + rand.IntN(0xf5-0x20))
		switch {
		case c == '"' || c == '\\' || c >= 0x80 && c < 0xc2:
			continue
		case c < 0x80:
			b.WriteByte(c)
			continue
		}
		seq := []byte{c}
		for c >= 0xc0 { // a continuation byte per leading 1 bit after the first
			seq = append(seq, byte(0x80+rand.IntN(64)))
			c <<= 1
		}
		if utf8.Valid(seq) {
			b.Write(seq)
		}
	}
	b.WriteString(strings.Repeat("x", size-2-b.Len()))
	b.WriteString(`"}`)
	return b.String()
}

// Every replacement, of any size by any size, removes the replaced
// generation's chunks in its own commit: after each PUT the table holds the
// head and its chunks only.
func TestReplacementsLeaveNoOldChunk(t *testing.T) {
	e := newEnv(t, servicetest.Option{DynamoDB: true}) // reads DynamoDB's items
	docs := []struct {
		name, json string
		chunks     int
	}{
		{"small", `{"v":1}`, 1},
		{"incompressible 2 MiB", noise(config.MaxBytes), 6},         // 8 items: the head, 6 chunks, 1 deletion
		{"another incompressible 2 MiB", noise(config.MaxBytes), 6}, // 13 items, the most
		{"random 2 MiB", random(config.MaxBytes), 5},
		{"repetitive 1 MiB", document(1<<20, "a setting; "), 1},
		{"small again", `{"v":2}`, 1},
	}
	for i, d := range docs {
		e.put(t, d.json, map[bool]int{true: http.StatusCreated, false: http.StatusNoContent}[i == 0])
		if got := e.stored(t); got != d.json {
			t.Fatalf("after storing %s, GET answers %d bytes, not the %d stored", d.name, len(got), len(d.json))
		}
		if n := onlyHeadChunks(t, e.api); n != d.chunks {
			t.Errorf("%s: %d chunks, want %d", d.name, n, d.chunks)
		}
	}
}

// refuse fails, before it is sent, every DynamoDB request of the functions
// whose operation (such as "BatchWriteItem") refused reports true, and
// keeps the operations it refused.
type refuse struct {
	refused func(op string) bool
	mu      sync.Mutex
	ops     []string
}

func (f *refuse) option() servicetest.Option {
	return servicetest.Option{Config: func(cfg *service.Config) {
		cfg.DynamoDBOptions = append(cfg.DynamoDBOptions, func(o *dynamodb.Options) {
			o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
				return s.Initialize.Add(middleware.InitializeMiddlewareFunc("Refuse",
					func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
						op := awsmiddleware.GetOperationName(ctx)
						if !f.refused(op) {
							return next.HandleInitialize(ctx, in)
						}
						f.mu.Lock()
						f.ops = append(f.ops, op)
						f.mu.Unlock()
						return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("refused by the test: " + op)
					}), middleware.Before)
			})
		})
	}}
}

func (f *refuse) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ops := f.ops
	f.ops = nil
	return ops
}

// A PUT does its cleanup inside its commit: with every request but the
// head's read, the chunks' read and the transaction refused (so that no
// deletion could run after the commit), replacing a 2 MiB document still
// answers 204, in three requests (the admin's account, the head, the
// commit), and leaves no old chunk.
func TestReplacementNeedsNoCleanupRequest(t *testing.T) {
	f := &refuse{refused: func(op string) bool { return op != "GetItem" && op != "BatchGetItem" && op != "TransactWriteItems" }}
	e := newEnv(t, f.option(), servicetest.Option{DynamoDB: true})
	e.put(t, random(config.MaxBytes), http.StatusCreated)
	e.reads.Take()
	other := random(config.MaxBytes)
	e.put(t, other, http.StatusNoContent)
	if ops, _ := e.reads.Take(); strings.Join(ops, ",") != "GetItem,GetItem,TransactWriteItems" {
		t.Errorf("PUT over a stored document made the requests %v; want GetItem (the admin's account), GetItem (the head), TransactWriteItems", ops)
	}
	if ops := f.took(); len(ops) > 0 {
		t.Errorf("PUT tried %v besides its commit", ops)
	}
	if got := e.stored(t); got != other {
		t.Fatalf("GET answers %d bytes, not the %d stored", len(got), len(other))
	}
	onlyHeadChunks(t, e.api)
}

// A PUT whose transaction does not commit changes nothing: the old
// document stays whole, and none of the new chunks is left.
func TestFailedCommitLeavesNothing(t *testing.T) {
	var failing atomic.Bool
	f := &refuse{refused: func(op string) bool { return failing.Load() && op == "TransactWriteItems" }}
	e := newEnv(t, f.option(), servicetest.Option{DynamoDB: true})
	doc := random(config.MaxBytes)
	tag := e.put(t, doc, http.StatusCreated)

	failing.Store(true)
	if r := e.admin.Do(t, "PUT", "/admin/config", random(config.MaxBytes)); r.StatusCode != http.StatusInternalServerError {
		t.Fatalf("PUT with its transaction refused = %d %s; want 500", r.StatusCode, r.Body)
	}
	failing.Store(false)
	if ops := f.took(); !slices.Equal(ops, []string{"TransactWriteItems"}) {
		t.Fatalf("refused %v; want the one transaction", ops)
	}
	r := e.customer.Do(t, "GET", "/config", "")
	if r.Body != doc || r.Header.Get("ETag") != tag {
		t.Errorf("after a failed PUT, GET answers %d bytes with ETag %s; want the %d stored, %s", len(r.Body), r.Header.Get("ETag"), len(doc), tag)
	}
	onlyHeadChunks(t, e.api)
}

// Chunks are read eventually consistent; one that such a read does not see
// yet, just after another instance wrote it, is read again consistently,
// and the GET still answers the whole document. (The instance that stores
// a document holds it, and reads none of its chunks.)
func TestStaleChunkReadIsReadAgain(t *testing.T) {
	p, opt := servicetest.Faults(t)
	api := servicetest.New(t, opt)
	customer := api.As(t, 2, quire.RoleCustomer)
	doc := `{"theme":"dark","limits":{"cart":50}}`
	putElsewhere(t, api, doc)
	p.Set(ddbfault.Rule{Fault: ddbfault.Stale, Operation: "BatchGetItem", Count: 1})
	batches, heads := p.Calls("BatchGetItem"), p.Calls("GetItem")
	if got := customer.Expect(t, "GET", "/config", "", http.StatusOK).Body; got != doc {
		t.Errorf("GET /config = %s, want %s", got, doc)
	}
	if n := p.Calls("BatchGetItem") - batches; n != 2 || p.Injected()[ddbfault.Stale] != 1 {
		t.Errorf("%d BatchGetItem calls, %d stale; want the stale one and a consistent one", n, p.Injected()[ddbfault.Stale])
	}
	if n := p.Calls("GetItem") - heads; n != 2 {
		t.Errorf("%d reads of the caller's account and the head, want 2: a chunk not seen yet is not a replaced document", n)
	}
}
