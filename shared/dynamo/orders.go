package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/carts"
	"github.com/quireapi/quire/shared/orders"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/users"
)

// OrderStore keeps orders in the orders table, under their buyer, and
// makes payments: the debit, the order and the emptied cart commit in one
// TransactWriteItems.
type OrderStore struct {
	db                   *dynamodb.Client
	orders, users, carts string
	now                  func() time.Time
}

// NewOrderStore returns an OrderStore on db with the physical table names t.
func NewOrderStore(db *dynamodb.Client, t TableNames) *OrderStore {
	return &OrderStore{
		db: db, now: time.Now,
		orders: t.Physical(routes.TableOrders), users: t.Physical(routes.TableUsers),
		carts: t.Physical(routes.TableCarts),
	}
}

// Pay commits a purchase in one transaction: the debit of the buyer's
// balance, the new order and, for a cart, its emptying (if its revision is
// as read). It reads the buyer while purchase reads what is bought, refuses
// a closed account or a short balance, and conditions the debit on the
// content hash it read, whose successor it writes: a buyer changed in
// between (a concurrent payment or deposit) is read again. The products
// bought are not part of the transaction: buyers of one book never
// contend, and each pays the price purchase read. When the transaction is
// cancelled nothing changed.
func (s *OrderStore) Pay(ctx context.Context, user quire.ID, purchase func(context.Context) (*orders.Purchase, error), o *orders.Order) error {
	var (
		p     *orders.Purchase
		buyer *users.User
	)
	err := quire.Concurrently(
		func() (err error) { p, err = purchase(ctx); return err },
		func() (err error) { buyer, err = s.buyer(ctx, user); return err },
	)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if buyer, err = s.buyer(ctx, user); err != nil {
				return err
			}
		}
		switch {
		case buyer.Status != users.StatusActive:
			return quire.Errorf(quire.EACCOUNTCLOSED, "The account %d is closed: it cannot pay.", user)
		case buyer.Balance < p.Total:
			return quire.Errorf(quire.EINSUFFICIENTFUNDS, "The balance is %s, short of the %s to pay: the shop must fund the account first.", buyer.Balance, p.Total)
		}
		now := s.now().UTC().Truncate(time.Millisecond)
		debited := *buyer
		debited.Balance -= p.Total
		debited.UpdatedAt = writeTime(now, buyer.UpdatedAt)
		debited.Hash = quire.ContentHash(&debited)
		*o = orders.Order{ID: quire.NewID(now), UserID: user, Items: p.Items, Total: p.Total, CreatedAt: now}
		items := []types.TransactWriteItem{
			{Update: &types.Update{
				TableName:                &s.users,
				Key:                      userKey(user),
				UpdateExpression:         aws.String("SET balance = :balance, updated_at = :now, #hash = :hash"),
				ConditionExpression:      aws.String("#hash = :old_hash"),
				ExpressionAttributeNames: map[string]string{"#hash": attrHash},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":balance": num(int64(debited.Balance)), ":now": str(debited.UpdatedAt.Format(time.RFC3339Nano)),
					":hash": str(debited.Hash), ":old_hash": str(buyer.Hash),
				},
			}},
			{Put: &types.Put{TableName: &s.orders, Item: orderItem(o), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}
		if p.Cart != nil {
			empty := carts.Cart{UserID: user, Items: map[quire.ID]int{}}
			items = append(items, types.TransactWriteItem{Update: &types.Update{
				TableName:                &s.carts,
				Key:                      cartKey(user),
				UpdateExpression:         aws.String("SET #items = :empty, updated_at = :now, #hash = :hash ADD revision :one"),
				ConditionExpression:      aws.String("revision = :revision"),
				ExpressionAttributeNames: map[string]string{"#items": "items", "#hash": attrHash},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
					":now":   str(now.Format(time.RFC3339Nano)), ":one": num(1), ":revision": num(p.Cart.Revision),
					":hash": str(quire.ContentHash(&empty)),
				},
			}})
		}
		err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		failed := cancelled(err)
		switch {
		case err == nil:
			return nil
		case failed[1] && attempt < maxIDAttempts:
			continue // the order id was taken in the same millisecond
		case failed[1]:
			return fmt.Errorf("pay: no free order id after %d attempts", maxIDAttempts)
		case failed[0] && attempt < maxChangeAttempts:
			// The buyer changed since read: read again.
			if err := pause(ctx, attempt); err != nil {
				return err
			}
			continue
		case failed[0]:
			return quire.Errorf(quire.ECONFLICT, "The account changed during the payment; nothing was paid. Pay again.")
		case len(failed) > 0:
			return quire.Errorf(quire.ECONFLICT, "The cart changed during the payment; nothing was paid. Check it and pay again.")
		default:
			return fmt.Errorf("pay %s for user %d: %w", p.Total, user, err)
		}
	}
}

// buyer reads the account that pays, consistently: EACCOUNTCLOSED when it
// is gone.
func (s *OrderStore) buyer(ctx context.Context, user quire.ID) (*users.User, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.users, Key: userKey(user), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read buyer %d: %w", user, err)
	}
	if out.Item == nil {
		return nil, quire.Errorf(quire.EACCOUNTCLOSED, "The user %d has no account to pay from.", user)
	}
	return parseUser(out.Item)
}

// Get returns the user's order id in one GetItem, and for an admin
// (anyUser) anyone's: the by_id index is queried at the same time, for an
// order of another user.
func (s *OrderStore) Get(ctx context.Context, user, id quire.ID, anyUser bool) (*orders.Order, error) {
	var own, found map[string]types.AttributeValue
	reads := []func() error{func() error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &s.orders, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{attrPK: str(userPrefix + user.String()), attrID: num(int64(id))},
		})
		if err != nil {
			return fmt.Errorf("get order %d: %w", id, err)
		}
		own = out.Item
		return nil
	}}
	if anyUser {
		reads = append(reads, func() error {
			q, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName: &s.orders, IndexName: aws.String(indexByID),
				KeyConditionExpression:    aws.String("id = :id"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":id": num(int64(id))},
			})
			if err != nil {
				return fmt.Errorf("find order %d: %w", id, err)
			}
			if len(q.Items) > 0 {
				found = q.Items[0]
			}
			return nil
		})
	}
	if err := quire.Concurrently(reads...); err != nil {
		return nil, err
	}
	item := own
	if item == nil {
		item = found
	}
	if item == nil {
		return nil, quire.Errorf(quire.ENOTFOUND, "No order has the id %d.", id)
	}
	return parseOrder(item)
}

// List returns a page of the user's orders, read consistently (see queryPage).
func (s *OrderStore) List(ctx context.Context, user, after quire.ID, limit int) ([]orders.Order, quire.ID, error) {
	os, next, err := queryPage(ctx, s.db, &dynamodb.QueryInput{
		TableName:              &s.orders,
		KeyConditionExpression: aws.String("pk = :p AND id > :after"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": str(userPrefix + user.String()), ":after": num(int64(after)),
		},
		ConsistentRead: aws.Bool(true),
	}, limit, parseOrder)
	if err != nil {
		return nil, 0, fmt.Errorf("list orders of user %d: %w", user, err)
	}
	return os, next, nil
}

// PutOrder stores o as it is, for demo data.
func (s *OrderStore) PutOrder(ctx context.Context, o orders.Order) error {
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.orders, Item: orderItem(&o)}); err != nil {
		return fmt.Errorf("put order %d: %w", o.ID, err)
	}
	return nil
}

func orderItem(o *orders.Order) map[string]types.AttributeValue {
	lines := make([]types.AttributeValue, len(o.Items))
	for i, it := range o.Items {
		lines[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"product_id": num(int64(it.ProductID)), "name": str(it.Name), "price": num(int64(it.Price)),
			"quantity": num(int64(it.Quantity)), "subtotal": num(int64(it.Subtotal)),
		}}
	}
	o.Hash = quire.ContentHash(o)
	return map[string]types.AttributeValue{
		attrPK: str(userPrefix + o.UserID.String()), attrID: num(int64(o.ID)), "user_id": num(int64(o.UserID)), attrHash: str(o.Hash),
		"items": &types.AttributeValueMemberL{Value: lines}, "total": num(int64(o.Total)),
		"created_at": str(o.CreatedAt.Format(time.RFC3339Nano)),
	}
}

func parseOrder(item map[string]types.AttributeValue) (*orders.Order, error) {
	var r reader
	o := &orders.Order{
		ID: quire.ID(r.num(item, attrID)), UserID: quire.ID(r.num(item, "user_id")),
		Total: quire.Money(r.num(item, "total")), CreatedAt: r.time(item, "created_at"), Items: []orders.Item{},
		Hash: r.str(item, attrHash),
	}
	lines, ok := item["items"].(*types.AttributeValueMemberL)
	if !ok {
		r.fail("items", "a list")
	} else {
		for _, v := range lines.Value {
			m, ok := v.(*types.AttributeValueMemberM)
			if !ok {
				r.fail("items", "a list of maps")
				break
			}
			o.Items = append(o.Items, orders.Item{
				ProductID: quire.ID(r.num(m.Value, "product_id")), Name: r.str(m.Value, "name"),
				Price: quire.Money(r.num(m.Value, "price")), Quantity: int(r.num(m.Value, "quantity")),
				Subtotal: quire.Money(r.num(m.Value, "subtotal")),
			})
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("read order item %v: %w", item[attrID], r.err)
	}
	return o, nil
}
