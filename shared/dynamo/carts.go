package dynamo

import (
	"context"
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
// whose "items" map holds a quantity per product id. Every change writes
// that item whole on the condition that it is as read, so concurrent
// changes all land and the bounds hold.
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
// the new cart (and refuse it), and writes it as modify does. It fills
// *out with the new cart before the transaction runs.
func (s *CartStore) Add(ctx context.Context, user, product quire.ID, quantity int, prepare func(*carts.Cart) error, out *carts.Cart) error {
	return s.modify(ctx, user, out, func(c *carts.Cart) error {
		n, has := c.Items[product]
		switch {
		case has && n+quantity > carts.MaxQuantity:
			return quire.Errorf(quire.ECARTFULL, "A cart holds at most %d copies of a book; it has %d of product %d.", carts.MaxQuantity, n, product)
		case !has && len(c.Items) >= carts.MaxItems:
			return quire.Errorf(quire.ECARTFULL, "A cart holds at most %d different books.", carts.MaxItems)
		}
		c.Items[product] = n + quantity
		return prepare(c)
	})
}

// Remove takes product out of the cart as modify does: ENOTFOUND when it
// is not in it, EPRECONDITION when the line fails pre.
func (s *CartStore) Remove(ctx context.Context, user, product quire.ID, pre quire.Precondition) error {
	return s.modify(ctx, user, new(carts.Cart), func(c *carts.Cart) error {
		if _, ok := c.Items[product]; !ok {
			return quire.Errorf(quire.ENOTFOUND, "The product %d is not in the cart.", product)
		}
		if err := pre.Check("line"); err != nil { // a line has no ETag: only If-Match: * holds
			return err
		}
		delete(c.Items, product)
		return nil
	})
}

// modify reads the cart, lets change change a copy of it (or refuse), and
// writes it whole, with its new content hash, in a transaction on the
// condition that it is still as read: a cart changed in between is read
// again, so concurrent changes all land. It fills *out with the new cart
// before the transaction runs.
func (s *CartStore) modify(ctx context.Context, user quire.ID, out *carts.Cart, change func(*carts.Cart) error) error {
	for attempt := 1; ; attempt++ {
		c, err := s.Get(ctx, user)
		if err != nil {
			return err
		}
		next := carts.Cart{UserID: user, Items: maps.Clone(c.Items), Revision: c.Revision + 1}
		if err := change(&next); err != nil {
			return err
		}
		next.Hash = quire.ContentHash(&next)
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
			return fmt.Errorf("change cart of user %d: %w", user, err)
		case attempt == maxChangeAttempts:
			return quire.Errorf(quire.ECONFLICT, "The cart changed during the request; retry it.")
		}
		if err := quire.Pause(ctx, attempt); err != nil {
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
