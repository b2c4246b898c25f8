package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/carts"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
)

// CartStore keeps each user's cart as one item of the carts table, "cart#<user id>",
// whose "items" map holds a quantity per product id. Every change is one
// conditional update of that item, so concurrent changes all land and the
// bounds hold.
type CartStore struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// NewCartStore returns a CartStore on db with the physical table names t.
func NewCartStore(db *dynamodb.Client, t TableNames) *CartStore {
	return &CartStore{db: db, table: t.Physical(routes.TableCarts), now: time.Now}
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

// Add reads the cart, adds quantity copies of product, lets prepare see
// the new cart (and refuse it), and writes the cart whole in a transaction
// on the condition that it is still as read: a cart changed in between is
// read again, so concurrent additions all land. It fills *out with the new
// cart before the transaction runs.
func (s *CartStore) Add(ctx context.Context, user, product quire.ID, quantity int, prepare func(*carts.Cart) error, out *carts.Cart) error {
	for attempt := 1; ; attempt++ {
		c, err := s.Get(ctx, user)
		if err != nil {
			return err
		}
		n, has := c.Items[product]
		switch {
		case has && n+quantity > carts.MaxQuantity:
			return quire.Errorf(quire.ECONFLICT, "A cart holds at most %d copies of a book; it has %d of product %d.", carts.MaxQuantity, n, product)
		case !has && len(c.Items) >= carts.MaxItems:
			return quire.Errorf(quire.ECONFLICT, "A cart holds at most %d different books.", carts.MaxItems)
		}
		next := carts.Cart{UserID: user, Items: maps.Clone(c.Items), Revision: c.Revision + 1}
		next.Items[product] = n + quantity
		if err := prepare(&next); err != nil {
			return err
		}
		*out = next
		cond, values := aws.String("attribute_not_exists(pk)"), map[string]types.AttributeValue(nil)
		if c.Revision > 0 {
			cond, values = aws.String("revision = :revision"), map[string]types.AttributeValue{":revision": num(c.Revision)}
		}
		err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
			Put: &types.Put{TableName: &s.table, Item: s.item(next), ConditionExpression: cond, ExpressionAttributeValues: values},
		}}})
		switch {
		case err == nil:
			return nil
		case !cancelled(err)[0]:
			return fmt.Errorf("add to cart of user %d: %w", user, err)
		case attempt == maxChangeAttempts:
			return quire.Errorf(quire.ECONFLICT, "The cart changed during the request; retry it.")
		}
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

func (s *CartStore) item(c carts.Cart) map[string]types.AttributeValue {
	items := map[string]types.AttributeValue{}
	for id, n := range c.Items {
		items[id.String()] = num(int64(n))
	}
	item := cartKey(c.UserID)
	item["items"] = &types.AttributeValueMemberM{Value: items}
	item["revision"] = num(c.Revision)
	item["updated_at"] = str(s.now().UTC().Format(time.RFC3339Nano))
	return item
}

// Remove takes product out of the cart in one conditional UpdateItem.
func (s *CartStore) Remove(ctx context.Context, user, product quire.ID) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       cartKey(user),
		UpdateExpression:          aws.String("REMOVE #items.#p SET updated_at = :now ADD revision :one"),
		ConditionExpression:       aws.String("attribute_exists(#items.#p)"),
		ExpressionAttributeNames:  map[string]string{"#items": "items", "#p": product.String()},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": str(s.now().UTC().Format(time.RFC3339Nano)), ":one": num(1)},
	})
	if _, failed := errors.AsType[*types.ConditionalCheckFailedException](err); failed {
		return quire.Errorf(quire.ENOTFOUND, "The product %d is not in the cart.", product)
	}
	if err != nil {
		return fmt.Errorf("remove from cart of user %d: %w", user, err)
	}
	return nil
}

func parseCart(user quire.ID, item map[string]types.AttributeValue) (*carts.Cart, error) {
	c := &carts.Cart{UserID: user, Items: map[quire.ID]int{}}
	if _, ok := item["revision"]; ok {
		var r reader
		if c.Revision = r.num(item, "revision"); r.err != nil {
			return nil, fmt.Errorf("cart of user %d: %w", user, r.err)
		}
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
