package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// CartStore keeps each user's cart as one item of the carts table, "cart#<user id>",
// whose "items" map holds a quantity per product id. Every change writes
// that item whole on the condition that it is as read, so concurrent
// changes all land and the bounds hold.
type CartStore struct {
	db             *dynamodb.Client
	table, records string
	now            func() time.Time
}

// NewCartStore returns a CartStore on db with the physical table names t.
func NewCartStore(db *dynamodb.Client, t TableNames) *CartStore {
	return &CartStore{db: db, table: t.Physical(routes.TableCarts), records: t.Physical(routes.TableIdempotency), now: time.Now}
}

const cartPrefix = "cart#"

func cartKey(user quire.ID) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(cartPrefix + user.String())}
}

// Get returns the user's cart, read consistently, empty if it has none.
func (s *CartStore) Get(ctx context.Context, user quire.ID) (*carts.Cart, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: cartKey(user), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get cart of user %d: %w", user, err)
	}
	return parseCart(user, out.Item)
}

// Commit writes the cart ch decided, whole, with rec, in one transaction
// on the condition that the cart is as read (its revision, or no cart
// yet). A transaction of one item still: its ClientRequestToken makes the
// SDK's retry of a lost answer apply nothing twice.
func (s *CartStore) Commit(ctx context.Context, ch carts.Change, rec *idempotency.Record) error {
	cond, values := aws.String("attribute_not_exists(pk)"), map[string]types.AttributeValue(nil)
	if ch.ReadRevision > 0 {
		cond, values = aws.String("revision = :revision"), map[string]types.AttributeValue{":revision": num(ch.ReadRevision)}
	}
	var t tx
	t = append(t, named{carts.StaleCart, types.TransactWriteItem{Put: &types.Put{
		TableName: &s.table, Item: s.item(ch.Cart), ConditionExpression: cond, ExpressionAttributeValues: values,
	}}})
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("change cart of user %d: %w", ch.Cart.UserID, err)
	}
	return nil
}

func (s *CartStore) item(c carts.Cart) map[string]types.AttributeValue {
	items := map[string]types.AttributeValue{}
	for id, n := range c.Items {
		items[id.String()] = num(int64(n))
	}
	item := cartKey(c.UserID)
	item["items"] = &types.AttributeValueMemberM{Value: items}
	item["revision"] = num(c.Revision)
	item[attrHash] = str(c.Hash)
	item["updated_at"] = str(s.now().UTC().Format(time.RFC3339Nano))
	return item
}

func parseCart(user quire.ID, item map[string]types.AttributeValue) (*carts.Cart, error) {
	c := &carts.Cart{UserID: user, Items: map[quire.ID]int{}}
	if item == nil { // no cart yet: an empty one
		c.Hash = quire.ContentHash(c)
		return c, nil
	}
	var r reader
	c.Revision, c.Hash = r.num(item, "revision"), r.str(item, attrHash)
	if r.err != nil {
		return nil, fmt.Errorf("cart of user %d: %w", user, r.err)
	}
	m, _ := item["items"].(*types.AttributeValueMemberM)
	if m == nil {
		return c, nil
	}
	for k, v := range m.Value {
		id, err1 := strconv.ParseInt(k, 10, 64)
		n, ok := v.(*types.AttributeValueMemberN)
		if !ok || err1 != nil {
			return nil, fmt.Errorf("cart of user %d: bad item %q", user, k)
		}
		q, err := strconv.Atoi(n.Value)
		if err != nil {
			return nil, fmt.Errorf("cart of user %d: bad quantity %q", user, n.Value)
		}
		c.Items[quire.ID(id)] = q
	}
	return c, nil
}
