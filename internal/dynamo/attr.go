package dynamo

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// str makes a string attribute value.
func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// num makes a number attribute value.
func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// pkOf returns an item's (or a key's) partition key value, or "".
func pkOf(item map[string]types.AttributeValue) string {
	if v, ok := item[attrPK].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// reader reads typed attributes from an item and keeps the first error.
type reader struct{ err error }

func (r *reader) fail(name, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("attribute %s is missing or not %s", name, want)
	}
}

func (r *reader) str(item map[string]types.AttributeValue, name string) string {
	v, ok := item[name].(*types.AttributeValueMemberS)
	if !ok {
		r.fail(name, "a string")
		return ""
	}
	return v.Value
}

// optStr reads a string attribute that is absent when empty. A field that
// may be empty (a profile's bio, location and website, the last_name of a
// one-word v2 name) is stored absent rather than as "", which DynamoDB
// takes too: every item stored so far has it absent, so writing "" would
// give the table two forms of empty for readers (and a future index or
// filter) to handle, for no gain, and an absent attribute keeps the item
// smaller. Content hashes are of the users.User, not of the item, so the
// form changes no ETag.
func (r *reader) optStr(item map[string]types.AttributeValue, name string) string {
	if _, ok := item[name]; !ok {
		return ""
	}
	return r.str(item, name)
}

func (r *reader) num(item map[string]types.AttributeValue, name string) int64 {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		r.fail(name, "a number")
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		r.fail(name, "an integer")
	}
	return n
}

// optNum reads a number attribute that is absent when zero.
func (r *reader) optNum(item map[string]types.AttributeValue, name string) int64 {
	if _, ok := item[name]; !ok {
		return 0
	}
	return r.num(item, name)
}

func (r *reader) time(item map[string]types.AttributeValue, name string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.str(item, name))
	if err != nil {
		r.fail(name, "an RFC 3339 time")
	}
	return t
}
