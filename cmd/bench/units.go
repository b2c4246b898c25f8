package main

import (
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/dynamo"
)

// DynamoDB's capacity rules, as its developer guide states them ("DynamoDB
// read and write operations" and "DynamoDB item sizes and formats"):
//   - a read takes a unit per 4 KB, rounded up (at least one step, also
//     for an item that does not exist): half for an eventually consistent
//     read, two for a transactional one. GetItem and each item of a
//     BatchGetItem round up alone; a Query rounds up the sum of the items
//     it reads (before any filter), as an index holds them;
//   - a write takes a unit per 1 KB of the larger of the item before and
//     after it, rounded up (at least one), two in a transaction, whether
//     its condition holds or not; a ConditionCheck counts as a write of
//     the item it checks;
//   - a global secondary index is written when an item enters it, leaves
//     it or changes in it: by the size of its entry (the projected
//     attributes), and twice (a delete and a put) when the item's index
//     key changes. An index of keys only changes with its keys alone.
//     Index writes are standard writes, also when a transaction causes
//     them: DynamoDB applies them after the commit.
const (
	readStep  = 4 << 10
	writeStep = 1 << 10
)

// consistency is how a read is made, which sets its price.
type consistency int

const (
	eventual consistency = iota
	strong
	transactional
)

func (c consistency) factor() float64 {
	switch c {
	case eventual:
		return 0.5
	case transactional:
		return 2
	}
	return 1
}

func consistencyOf(consistent *bool) consistency {
	if consistent != nil && *consistent {
		return strong
	}
	return eventual
}

// readUnits is the units of reading bytes in one piece: one item, or all
// the items of a Query.
func readUnits(bytes int, c consistency) float64 {
	return float64(max(1, (bytes+readStep-1)/readStep)) * c.factor()
}

// writeUnits is the units of writing an item of bytes (the larger of its
// sizes before and after).
func writeUnits(bytes int, txn bool) float64 {
	n := max(1, (bytes+writeStep-1)/writeStep)
	if txn {
		n *= 2
	}
	return float64(n)
}

type item = map[string]types.AttributeValue

// itemSize is an item's size by DynamoDB's rules: the UTF-8 length of
// every attribute name plus the size of its value.
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is an attribute value's size: a string's UTF-8 bytes; a
// number's 1 byte per two significant digits, plus 1; a binary's raw
// bytes; 1 for a Boolean or null; a set's elements; a list or a map 3
// bytes, plus 1 byte and the size of each element (and a map element's
// name).
func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is the size of a number: its significant digits (leading and
// trailing zeros trimmed), a byte per two, and one byte more.
func numberSize(s string) int {
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, mantissa)
	digits = strings.Trim(digits, "0")
	return (len(digits)+1)/2 + 1
}

// keyText is a key attribute's value as text: a string or number as it
// is, a binary value in base64.
func keyText(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return base64.StdEncoding.EncodeToString(v.Value)
	}
	return ""
}

// keyOf returns the attributes of it that t's primary key is made of.
func keyOf(t dynamo.Table, it item) item {
	k := item{t.PartitionKey.Name: it[t.PartitionKey.Name]}
	if t.SortKey != nil {
		k[t.SortKey.Name] = it[t.SortKey.Name]
	}
	return k
}

// indexEntry returns the entry item it has in index ix of table t: nil
// when it lacks one of the index's key attributes (the index is sparse),
// else its projection: every attribute, or the table's and the index's
// keys.
func indexEntry(t dynamo.Table, ix dynamo.Index, it item) item {
	if it == nil || it[ix.PartitionKey.Name] == nil || (ix.SortKey != nil && it[ix.SortKey.Name] == nil) {
		return nil
	}
	if !ix.KeysOnly {
		return it
	}
	e := keyOf(t, it)
	e[ix.PartitionKey.Name] = it[ix.PartitionKey.Name]
	if ix.SortKey != nil {
		e[ix.SortKey.Name] = it[ix.SortKey.Name]
	}
	return e
}

// partitionWrite is a write to one partition key value of an index.
type partitionWrite struct {
	key   string
	units float64
}

// indexWrites returns the writes a change of an item from before to after
// (either nil when the item is absent) makes in index ix of table t: a put
// when it enters the index, a delete when it leaves it, a delete and a put
// when its index key changes, and an update when its entry changes in
// place (never for an index of keys only, whose entry is its keys).
func indexWrites(t dynamo.Table, ix dynamo.Index, before, after item) []partitionWrite {
	b, a := indexEntry(t, ix, before), indexEntry(t, ix, after)
	write := func(e item) partitionWrite {
		return partitionWrite{keyText(e[ix.PartitionKey.Name]), writeUnits(itemSize(e), false)}
	}
	switch {
	case b == nil && a == nil:
		return nil
	case a == nil:
		return []partitionWrite{write(b)}
	case b == nil:
		return []partitionWrite{write(a)}
	}
	keyChanged := !reflect.DeepEqual(b[ix.PartitionKey.Name], a[ix.PartitionKey.Name]) ||
		(ix.SortKey != nil && !reflect.DeepEqual(b[ix.SortKey.Name], a[ix.SortKey.Name]))
	switch {
	case keyChanged:
		return []partitionWrite{write(b), write(a)}
	case reflect.DeepEqual(b, a):
		return nil
	}
	return []partitionWrite{{keyText(a[ix.PartitionKey.Name]), writeUnits(max(itemSize(b), itemSize(a)), false)}}
}

// span is when one DynamoDB request was made, as its caller saw it.
type span struct{ start, end time.Time }

// roundTrips is the number of sequential round trips in spans: requests
// that overlap in time count once. It is the longest chain of requests
// each of which starts after the one before it ended, which taking the
// request that ends first, again and again, finds.
func roundTrips(spans []span) int {
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b span) int { return a.end.Compare(b.end) })
	n := 0
	var last time.Time
	for _, sp := range s {
		if n == 0 || sp.start.After(last) {
			n, last = n+1, sp.end
		}
	}
	return n
}
