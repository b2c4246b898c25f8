package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// OrderStore keeps orders in the orders table, under their buyer, and
// commits payments: the debit, the order and the emptied cart in one
// TransactWriteItems.
type OrderStore struct {
	db                                    *dynamodb.Client
	orders, users, carts, records, events string
}

// NewOrderStore returns an OrderStore on db with the physical table names t.
func NewOrderStore(db *dynamodb.Client, t TableNames) *OrderStore {
	return &OrderStore{
		db: db, orders: t.Physical(routes.TableOrders), users: t.Physical(routes.TableUsers),
		carts: t.Physical(routes.TableCarts), records: t.Physical(routes.TableIdempotency),
		events: t.Physical(routes.TableEvents),
	}
}

// CommitPayment commits pay with rec in one transaction: the debit, over
// the buyer's content hash as read; the order, under an id no order has;
// for a cart, its emptying, over its revision as read; and the order's
// event, into the outbox. The products
// bought are not part of it: buyers of one book never contend, and each
// pays the price they read. When it is cancelled nothing changed.
func (s *OrderStore) CommitPayment(ctx context.Context, pay orders.Payment, rec *idempotency.Record) error {
	b, o := pay.Buyer, pay.Order
	var t tx
	t = append(t, named{orders.StaleBuyer, types.TransactWriteItem{Update: &types.Update{
		TableName:                &s.users,
		Key:                      userKey(b.ID),
		UpdateExpression:         aws.String("SET balance = :balance, updated_at = :now, #hash = :hash"),
		ConditionExpression:      aws.String("#hash = :read"),
		ExpressionAttributeNames: map[string]string{"#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":balance": num(int64(b.Balance)), ":now": str(b.UpdatedAt.Format(time.RFC3339Nano)),
			":hash": str(b.Hash), ":read": str(pay.ReadHash),
		},
	}}})
	t = append(t, named{orders.StaleOrder, types.TransactWriteItem{Put: &types.Put{
		TableName: &s.orders, Item: orderItem(&o), ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}})
	if c := pay.Cart; c != nil {
		t = append(t, named{orders.StaleCart, types.TransactWriteItem{Update: &types.Update{
			TableName:                &s.carts,
			Key:                      cartKey(c.UserID),
			UpdateExpression:         aws.String("SET #items = :empty, updated_at = :now, #hash = :hash ADD revision :one"),
			ConditionExpression:      aws.String("revision = :revision"),
			ExpressionAttributeNames: map[string]string{"#items": "items", "#hash": attrHash},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
				":now":   str(o.CreatedAt.Format(time.RFC3339Nano)), ":one": num(1), ":revision": num(c.Revision),
				":hash": str(c.Hash),
			},
		}}})
	}
	t = append(t, published(s.events, pay.Event)...)
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("pay %s for user %d: %w", o.Total, b.ID, err)
	}
	return nil
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
		return nil, quire.NotFound("order " + id.String())
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
	o.Hash = quire.ContentHash(&o)
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.orders, Item: orderItem(&o)}); err != nil {
		return fmt.Errorf("put order %d: %w", o.ID, err)
	}
	return nil
}

// orderItem is the item of o, with the content hash it carries.
func orderItem(o *orders.Order) map[string]types.AttributeValue {
	lines := make([]types.AttributeValue, len(o.Items))
	for i, it := range o.Items {
		lines[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"product_id": num(int64(it.ProductID)), "name": str(it.Name), "price": num(int64(it.Price)),
			"quantity": num(int64(it.Quantity)), "subtotal": num(int64(it.Subtotal)),
		}}
	}
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
