package dynamo

import (
	"context"
	"errors"
	"fmt"
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

// Add adds quantity copies of product in one UpdateItem on a cart that
// exists; the first addition creates the cart with a PutItem instead. A
// condition that fails is read back to tell which bound it hit; a cart
// changed in between is tried again.
func (s *CartStore) Add(ctx context.Context, user, product quire.ID, quantity int) (*carts.Cart, error) {
	pid := product.String()
	now := str(s.now().UTC().Format(time.RFC3339Nano))
	for range maxWriteAttempts {
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:        &s.table,
			Key:              cartKey(user),
			UpdateExpression: aws.String("SET #items.#p = if_not_exists(#items.#p, :zero) + :q, updated_at = :now ADD revision :one"),
			ConditionExpression: aws.String("attribute_exists(#items) AND " +
				"(attribute_not_exists(#items.#p) OR #items.#p <= :most) AND " +
				"(attribute_exists(#items.#p) OR size(#items) < :max_items)"),
			ExpressionAttributeNames: map[string]string{"#items": "items", "#p": pid},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":zero": num(0), ":q": num(int64(quantity)), ":now": now, ":one": num(1),
				":most":      num(int64(carts.MaxQuantity - quantity)),
				":max_items": num(carts.MaxItems),
			},
			ReturnValues: types.ReturnValueAllNew,
		})
		if err == nil {
			return parseCart(user, out.Attributes)
		}
		if _, failed := errors.AsType[*types.ConditionalCheckFailedException](err); !failed {
			return nil, fmt.Errorf("add to cart of user %d: %w", user, err)
		}
		c, err := s.Get(ctx, user)
		if err != nil {
			return nil, err
		}
		switch n, has := c.Items[product]; {
		case has && n+quantity > carts.MaxQuantity:
			return nil, quire.Errorf(quire.ECONFLICT, "A cart holds at most %d copies of a book; it has %d of product %d.", carts.MaxQuantity, n, product)
		case !has && len(c.Items) >= carts.MaxItems:
			return nil, quire.Errorf(quire.ECONFLICT, "A cart holds at most %d different books.", carts.MaxItems)
		case len(c.Items) > 0:
			continue // changed in between: try again
		}
		// No cart yet: create it, unless another request just did.
		item := cartKey(user)
		item["items"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{pid: num(int64(quantity))}}
		item["updated_at"], item["revision"] = now, num(c.Revision+1)
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.table, Item: item,
			ConditionExpression:       aws.String("attribute_not_exists(#items) OR size(#items) = :zero"),
			ExpressionAttributeNames:  map[string]string{"#items": "items"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":zero": num(0)},
		})
		if _, failed := errors.AsType[*types.ConditionalCheckFailedException](err); failed {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create cart of user %d: %w", user, err)
		}
		return parseCart(user, item)
	}
	return nil, quire.Errorf(quire.ECONFLICT, "The cart changed during the request; retry it.")
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
