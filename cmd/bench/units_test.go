package main

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/dynamo"
)

// The examples of DynamoDB's developer guide ("DynamoDB read and write
// operations", and the key terms of its pricing page).
func TestReadUnits(t *testing.T) {
	const kb = 1024
	for _, c := range []struct {
		name  string
		bytes int
		c     consistency
		want  float64
	}{
		{"a 3,500-byte item reads as 4 KB", 3500, strong, 1},
		{"a 10 KB item rounds up to 12 KB", 10 * kb, strong, 3},
		{"an 8 KB item, strongly consistent", 8 * kb, strong, 2},
		{"an 8 KB item, eventually consistent", 8 * kb, eventual, 1},
		{"an 8 KB item, transactional", 8 * kb, transactional, 4},
		{"a Query of 40.8 KB in all rounds up to 44 KB", 40*kb + 819, strong, 11},
		{"a missing item still takes a step", 0, strong, 1},
		{"a missing item, eventually consistent", 0, eventual, 0.5},
	} {
		if got := readUnits(c.bytes, c.c); got != c.want {
			t.Errorf("%s: readUnits(%d, %d) = %v, want %v", c.name, c.bytes, c.c, got, c.want)
		}
	}
	// BatchGetItem rounds each item up alone: 1.5 KB and 6.5 KB read as
	// 4 KB + 8 KB, not 8 KB.
	if got := readUnits(1536, strong) + readUnits(6656, strong); got != 3 {
		t.Errorf("BatchGetItem of 1.5 KB and 6.5 KB = %v units, want 3", got)
	}
}

func TestWriteUnits(t *testing.T) {
	for _, c := range []struct {
		bytes int
		txn   bool
		want  float64
	}{
		{1024, false, 1}, // a standard write of a 1 KB item
		{3 * 1024, false, 3},
		{3 * 1024, true, 6}, // a transactional write of a 3 KB item
		{500, false, 1},
		{1025, false, 2},
		{0, false, 1}, // a delete of a missing item
	} {
		if got := writeUnits(c.bytes, c.txn); got != c.want {
			t.Errorf("writeUnits(%d, %t) = %v, want %v", c.bytes, c.txn, got, c.want)
		}
	}
}

func TestItemSize(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for _, c := range []struct {
		name string
		item item
		want int
	}{
		{"a string: its name and bytes", item{"name": s("Frankenstein")}, 4 + 12},
		{"UTF-8 bytes, not characters", item{"a": s("é")}, 1 + 2},
		{"a number: a byte per two significant digits, and one", item{"price": n("1299")}, 5 + 3},
		{"trailing zeros trimmed", item{"n": n("100")}, 1 + 2},
		{"leading zeros trimmed", item{"n": n("0.001")}, 1 + 2},
		{"sign and point", item{"n": n("-12.345")}, 1 + 4},
		{"zero", item{"n": n("0")}, 1 + 1},
		{"binary: raw bytes", item{"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}, 1 + 3},
		{"a Boolean", item{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{"null", item{"x": &types.AttributeValueMemberNULL{Value: true}}, 1 + 1},
		{"a string set", item{"ss": &types.AttributeValueMemberSS{Value: []string{"ab", "c"}}}, 2 + 3},
		{"a list: 3 bytes and a byte per element", item{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("bc")}}}, 1 + 3 + 2 + 3},
		{"an empty map", item{"m": &types.AttributeValueMemberM{}}, 1 + 3},
		{"a map: its elements' names too", item{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": n("5")}}}, 1 + 3 + 1 + 1 + 2},
		{"several attributes", item{"pk": s("user#2"), "id": n("2")}, 2 + 6 + 2 + 2},
	} {
		if got := itemSize(c.item); got != c.want {
			t.Errorf("%s: itemSize = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestIndexWrites(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	table := dynamo.Table{Name: "users", PartitionKey: dynamo.Key{Name: "pk", Type: "S"}}
	keys := dynamo.Index{Name: "role", PartitionKey: dynamo.Key{Name: "role_pk", Type: "S"}, SortKey: &dynamo.Key{Name: "id", Type: "N"}, KeysOnly: true}
	all := keys
	all.KeysOnly = false
	customer := item{"pk": s("user#2"), "id": n("2"), "role_pk": s("customer"), "balance": n("100")}
	richer := item{"pk": s("user#2"), "id": n("2"), "role_pk": s("customer"), "balance": n("2500")}
	admin := item{"pk": s("user#2"), "id": n("2"), "role_pk": s("admin"), "balance": n("100")}
	closed := item{"pk": s("user#2"), "id": n("2"), "balance": n("100")}
	for _, c := range []struct {
		name          string
		index         dynamo.Index
		before, after item
		want          []partitionWrite
	}{
		{"a new item enters", keys, nil, customer, []partitionWrite{{"customer", 1}}},
		{"a deleted item leaves", keys, customer, nil, []partitionWrite{{"customer", 1}}},
		{"an item that loses the index key leaves", keys, customer, closed, []partitionWrite{{"customer", 1}}},
		{"keys only: another attribute changes nothing", keys, customer, richer, nil},
		{"keys only: a key change is a delete and a put", keys, customer, admin, []partitionWrite{{"customer", 1}, {"admin", 1}}},
		{"all: any change writes in place", all, customer, richer, []partitionWrite{{"customer", 1}}},
		{"all: no change writes nothing", all, customer, customer, nil},
		{"an item without the index keys is not in it", all, closed, closed, nil},
		{"an item lacking the sort key is not in it", keys, nil, item{"pk": s("user#3"), "role_pk": s("admin")}, nil},
	} {
		got := indexWrites(table, c.index, c.before, c.after)
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(partitionWrite{})); diff != "" {
			t.Errorf("%s: indexWrites (-want +got):\n%s", c.name, diff)
		}
	}
	// A keys-only entry holds the table's and the index's keys alone.
	if got, want := itemSize(indexEntry(table, keys, customer)), itemSize(item{"pk": s("user#2"), "id": n("2"), "role_pk": s("customer")}); got != want {
		t.Errorf("keys-only entry size = %d, want %d", got, want)
	}
	// An entry of more than 1 KB takes a unit per KB.
	big := item{"pk": s("user#2"), "id": n("2"), "role_pk": s("customer"), "bio": s(strings.Repeat("x", 2000))}
	if got := indexWrites(table, all, nil, big); len(got) != 1 || got[0].units != 2 {
		t.Errorf("a put of a 2 KB entry = %v, want 2 units", got)
	}
}

func TestRoundTrips(t *testing.T) {
	at := func(from, to int) span {
		t0 := time.Unix(0, 0)
		return span{t0.Add(time.Duration(from) * time.Millisecond), t0.Add(time.Duration(to) * time.Millisecond)}
	}
	for _, c := range []struct {
		name  string
		spans []span
		want  int
	}{
		{"none", nil, 0},
		{"one", []span{at(0, 2)}, 1},
		{"three in a row", []span{at(0, 2), at(3, 5), at(6, 8)}, 3},
		{"two at once, then one", []span{at(0, 3), at(0, 2), at(4, 6)}, 2},
		{"listed out of order", []span{at(4, 6), at(0, 2), at(0, 3)}, 2},
		{"a long one beside two short ones in a row, then one", []span{at(0, 10), at(1, 3), at(4, 6), at(11, 12)}, 3},
		{"a request that starts as another ends overlaps it", []span{at(0, 2), at(2, 4)}, 1},
	} {
		if got := roundTrips(c.spans); got != c.want {
			t.Errorf("%s: roundTrips = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestKeyConditionValue(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	values := map[string]types.AttributeValue{":p": s("product"), ":after": &types.AttributeValueMemberN{Value: "0"}}
	for _, c := range []struct {
		expr  string
		names map[string]string
		want  string
	}{
		{"#p = :p AND id > :after", map[string]string{"#p": "kind"}, "product"},
		{"kind = :p", nil, "product"},
		{"id > :after and (kind = :p)", nil, "product"},
	} {
		v, err := keyConditionValue(c.expr, "kind", c.names, values)
		if err != nil || keyText(v) != c.want {
			t.Errorf("keyConditionValue(%q) = %v, %v; want %s", c.expr, keyText(v), err, c.want)
		}
	}
	if _, err := keyConditionValue("id > :after", "kind", nil, values); err == nil {
		t.Error("keyConditionValue without the partition key: no error")
	}
}
