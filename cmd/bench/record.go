package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/quireapi/quire/internal/dynamo"
)

// recorder records every DynamoDB request of the clients it is an option
// of: when the caller made it, and each partition key value it read or
// wrote, in a table or an index, with its units by DynamoDB's rules (see
// units.go). It reads the whole items around each request, consistently,
// with a client of its own whose reads it does not record: DynamoDB bills
// the whole item whatever a request projects, and a write by the larger of
// the item before and after it.
type recorder struct {
	raw      *dynamodb.Client
	tables   map[string]dynamo.Table // by physical name
	physical dynamo.TableNames

	mu    sync.Mutex
	calls []call
	err   error // the first failure to read around a request
}

// call is one DynamoDB request.
type call struct {
	op string
	span
	touches []touch
}

// touch is what one request did to one partition key value.
type touch struct {
	table, index string // the logical table name, and the index's name or ""
	attr, value  string // the partition key attribute and its value
	read, write  float64
}

func newRecorder(cfg dynamo.Config) (*recorder, error) {
	raw, err := dynamo.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	r := &recorder{raw: raw, tables: map[string]dynamo.Table{}, physical: cfg.Tables}
	for _, t := range dynamo.Tables() {
		r.tables[cfg.Tables.Physical(t.Name)] = t
	}
	return r, nil
}

// Option is the client option that records.
func (r *recorder) Option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordRequests", r.handle), middleware.Before)
	})
}

// handle times the request as its caller sees it, the recorder's own reads
// included: a request the caller makes after another has returned starts
// after it ended, and requests it makes together overlap.
func (r *recorder) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	start := time.Now()
	own := context.WithoutCancel(ctx)
	writes, err := r.writes(own, in.Parameters)
	out, md, reqErr := next.HandleInitialize(ctx, in)
	var touches []touch
	if err == nil {
		touches, err = r.touches(own, in.Parameters, writes)
	}
	c := call{op: awsmiddleware.GetOperationName(ctx), span: span{start, time.Now()}, touches: touches}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("record %s: %w", c.op, err)
	}
	r.mu.Unlock()
	return out, md, reqErr
}

// Take returns the requests recorded since the last Take, and starts
// again; or the first failure to read around one.
func (r *recorder) Take() ([]call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, err := r.calls, r.err
	r.calls, r.err = nil, nil
	return calls, err
}

// write is one item a write request changes or, in a transaction, checks.
type write struct {
	table      dynamo.Table
	key        item
	txn, check bool
	before     item
}

// writes returns the items the request params writes, as they are before it.
func (r *recorder) writes(ctx context.Context, params any) ([]write, error) {
	var ws []write
	add := func(table *string, key item, txn, check bool) {
		if t, ok := r.tables[aws.ToString(table)]; ok {
			ws = append(ws, write{table: t, key: key, txn: txn, check: check})
		}
	}
	switch p := params.(type) {
	case *dynamodb.PutItemInput:
		if t, ok := r.tables[aws.ToString(p.TableName)]; ok {
			add(p.TableName, keyOf(t, p.Item), false, false)
		}
	case *dynamodb.UpdateItemInput:
		add(p.TableName, p.Key, false, false)
	case *dynamodb.DeleteItemInput:
		add(p.TableName, p.Key, false, false)
	case *dynamodb.TransactWriteItemsInput:
		for _, ti := range p.TransactItems {
			switch {
			case ti.Put != nil:
				if t, ok := r.tables[aws.ToString(ti.Put.TableName)]; ok {
					add(ti.Put.TableName, keyOf(t, ti.Put.Item), true, false)
				}
			case ti.Update != nil:
				add(ti.Update.TableName, ti.Update.Key, true, false)
			case ti.Delete != nil:
				add(ti.Delete.TableName, ti.Delete.Key, true, false)
			case ti.ConditionCheck != nil:
				add(ti.ConditionCheck.TableName, ti.ConditionCheck.Key, true, true)
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for table, reqs := range p.RequestItems {
			t, ok := r.tables[table]
			for _, wr := range reqs {
				switch {
				case !ok:
				case wr.PutRequest != nil:
					add(&table, keyOf(t, wr.PutRequest.Item), false, false)
				case wr.DeleteRequest != nil:
					add(&table, wr.DeleteRequest.Key, false, false)
				}
			}
		}
	}
	for i := range ws {
		var err error
		if ws[i].before, err = r.get(ctx, ws[i].table, ws[i].key); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// touches returns what the request params did, after it: reads by the
// items it read, writes by ws and the items after it.
func (r *recorder) touches(ctx context.Context, params any, ws []write) ([]touch, error) {
	var out []touch
	read := func(t dynamo.Table, key item, c consistency) error {
		it, err := r.get(ctx, t, key)
		out = append(out, touch{table: t.Name, attr: t.PartitionKey.Name, value: keyText(key[t.PartitionKey.Name]),
			read: readUnits(itemSize(it), c)})
		return err
	}
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		if t, ok := r.tables[aws.ToString(p.TableName)]; ok {
			if err := read(t, p.Key, consistencyOf(p.ConsistentRead)); err != nil {
				return nil, err
			}
		}
	case *dynamodb.BatchGetItemInput:
		for table, ka := range p.RequestItems {
			t, ok := r.tables[table]
			for _, key := range ka.Keys {
				if !ok {
					break
				}
				if err := read(t, key, consistencyOf(ka.ConsistentRead)); err != nil {
					return nil, err
				}
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, g := range p.TransactItems {
			if t, ok := r.tables[aws.ToString(g.Get.TableName)]; ok {
				if err := read(t, g.Get.Key, transactional); err != nil {
					return nil, err
				}
			}
		}
	case *dynamodb.QueryInput:
		tc, err := r.query(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, tc)
	}
	for _, w := range ws {
		after, err := r.get(ctx, w.table, w.key)
		if err != nil {
			return nil, err
		}
		size := max(itemSize(w.before), itemSize(after))
		if w.check {
			size, after = itemSize(w.before), w.before
		}
		out = append(out, touch{table: w.table.Name, attr: w.table.PartitionKey.Name,
			value: keyText(w.key[w.table.PartitionKey.Name]), write: writeUnits(size, w.txn)})
		for _, ix := range w.table.Indexes {
			for _, pw := range indexWrites(w.table, ix, w.before, after) {
				out = append(out, touch{table: w.table.Name, index: ix.Name, attr: ix.PartitionKey.Name, value: pw.key, write: pw.units})
			}
		}
	}
	return out, nil
}

// get reads the whole item of key in t, consistently: nil when there is
// none.
func (r *recorder) get(ctx context.Context, t dynamo.Table, key item) (item, error) {
	name := r.physical.Physical(t.Name)
	out, err := r.raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// query runs the Query p again without its filter and projection, which
// DynamoDB applies after it has read (and billed) the items, and returns
// its partition and the units of the items it reads, as the table or the
// index holds them. A Query of an index is always eventually consistent.
func (r *recorder) query(ctx context.Context, p *dynamodb.QueryInput) (touch, error) {
	t, ok := r.tables[aws.ToString(p.TableName)]
	if !ok {
		return touch{}, fmt.Errorf("query of an unknown table %s", aws.ToString(p.TableName))
	}
	tc := touch{table: t.Name, attr: t.PartitionKey.Name, index: aws.ToString(p.IndexName)}
	c := consistencyOf(p.ConsistentRead)
	for _, ix := range t.Indexes {
		if ix.Name == tc.index {
			tc.attr, c = ix.PartitionKey.Name, eventual
		}
	}
	expr := aws.ToString(p.KeyConditionExpression)
	q := &dynamodb.QueryInput{
		TableName: p.TableName, IndexName: p.IndexName, KeyConditionExpression: p.KeyConditionExpression,
		ExclusiveStartKey: p.ExclusiveStartKey, Limit: p.Limit, ScanIndexForward: p.ScanIndexForward, ConsistentRead: p.ConsistentRead,
	}
	for _, ref := range placeholder.FindAllString(expr, -1) {
		if strings.HasPrefix(ref, "#") {
			if q.ExpressionAttributeNames == nil {
				q.ExpressionAttributeNames = map[string]string{}
			}
			q.ExpressionAttributeNames[ref] = p.ExpressionAttributeNames[ref]
		} else {
			if q.ExpressionAttributeValues == nil {
				q.ExpressionAttributeValues = map[string]types.AttributeValue{}
			}
			q.ExpressionAttributeValues[ref] = p.ExpressionAttributeValues[ref]
		}
	}
	v, err := keyConditionValue(expr, tc.attr, p.ExpressionAttributeNames, p.ExpressionAttributeValues)
	if err != nil {
		return touch{}, err
	}
	tc.value = keyText(v)
	out, err := r.raw.Query(ctx, q)
	if err != nil {
		return touch{}, err
	}
	bytes := 0
	for _, it := range out.Items {
		bytes += itemSize(it)
	}
	tc.read = readUnits(bytes, c)
	return tc, nil
}

// placeholder matches the attribute name and value placeholders of an
// expression.
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// keyCondition matches one equality of a key condition: name = :value.
var keyCondition = regexp.MustCompile(`^\(?\s*([#A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)\s*\)?$`)

var and = regexp.MustCompile(`(?i)\s+and\s+`)

// keyConditionValue returns the value a key condition expression sets the
// partition key attr to.
func keyConditionValue(expr, attr string, names map[string]string, values map[string]types.AttributeValue) (types.AttributeValue, error) {
	for _, clause := range and.Split(expr, -1) {
		m := keyCondition.FindStringSubmatch(strings.TrimSpace(clause))
		if m == nil {
			continue
		}
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = names[name]
		}
		if name == attr && values[m[2]] != nil {
			return values[m[2]], nil
		}
	}
	return nil, errors.New("no partition key " + attr + " in the key condition " + expr)
}
