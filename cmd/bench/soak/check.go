package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// state is what the tables hold, read with consistent Scans.
type state struct {
	balances map[quire.ID]quire.Money // by user
	orders   map[quire.ID]order       // by order id
	dupes    []quire.ID               // order ids stored more than once
	records  map[string]record        // by idempotency key
}

type order struct {
	user  quire.ID
	total quire.Money
}

// record is an idempotency record: the first answer to a key.
type record struct {
	scope  string
	status int
	body   []byte
}

// scan reads the users, orders and idempotency tables straight from
// DynamoDB, around the fault proxy.
func scan(ctx context.Context, db *dynamodb.Client, t dynamo.TableNames) (*state, error) {
	s := &state{balances: map[quire.ID]quire.Money{}, orders: map[quire.ID]order{}, records: map[string]record{}}
	err := scanTable(ctx, db, t.Physical(routes.TableUsers), func(item map[string]types.AttributeValue) error {
		if !strings.HasPrefix(text(item["pk"]), "user#") {
			return nil // an email's reservation
		}
		id, err := number(item, "id")
		if err != nil {
			return err
		}
		balance, err := number(item, "balance")
		s.balances[quire.ID(id)] = quire.Money(balance)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = scanTable(ctx, db, t.Physical(routes.TableOrders), func(item map[string]types.AttributeValue) error {
		id, err := number(item, "id")
		if err != nil {
			return err
		}
		user, err := number(item, "user_id")
		if err != nil {
			return err
		}
		total, err := number(item, "total")
		if _, dup := s.orders[quire.ID(id)]; dup {
			s.dupes = append(s.dupes, quire.ID(id))
		}
		s.orders[quire.ID(id)] = order{quire.ID(user), quire.Money(total)}
		return err
	})
	if err != nil {
		return nil, err
	}
	err = scanTable(ctx, db, t.Physical(routes.TableIdempotency), func(item map[string]types.AttributeValue) error {
		scope := text(item["pk"])
		status, err := number(item, "status")
		rec := record{scope: scope, status: int(status)}
		if b, ok := item["body"].(*types.AttributeValueMemberB); ok {
			rec.body = b.Value
		}
		s.records[scope[strings.LastIndexByte(scope, ' ')+1:]] = rec
		return err
	})
	return s, err
}

// scanTable calls fn with every item of table, read consistently.
func scanTable(ctx context.Context, db *dynamodb.Client, table string, fn func(map[string]types.AttributeValue) error) error {
	in := &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true)}
	for {
		out, err := db.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range out.Items {
			if err := fn(item); err != nil {
				return fmt.Errorf("scan %s: item %s: %w", table, text(item["pk"]), err)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func text(v types.AttributeValue) string {
	s, _ := v.(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func number(item map[string]types.AttributeValue, name string) (int64, error) {
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("no number %s", name)
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// checkAll checks the answers of ops, and the tables before and after
// them: an op's effect is its key's record, whatever the client heard.
func checkAll(ops []*op, before, after *state, seeded int) []check {
	return []check{
		checkServerErrors(ops),
		checkRetryAfter(ops),
		checkRecords(ops, after),
		checkMoney(ops, before, after),
		checkMoneyPerUser(ops, before, after),
		checkOrders(ops, before, after),
		checkUsers(ops, before, after, seeded),
	}
}

func checkServerErrors(ops []*op) check {
	n := len(otherServerErrors(ops))
	return check{"every 5xx is a 503 with Retry-After", n == 0, fmt.Sprintf("%d other 5xx (listed above)", n), nil}
}

// checkRetryAfter checks that an answer carries Retry-After exactly when
// a retry can get past it: 503, 429 and the 409 of type conflict.
func checkRetryAfter(ops []*op) check {
	bad, answers := []string{}, 0
	for _, o := range ops {
		for _, t := range o.tries {
			if t.err != nil {
				continue
			}
			answers++
			want := t.status == http.StatusServiceUnavailable || t.status == http.StatusTooManyRequests ||
				t.problem == rest.ProblemType(quire.ECONFLICT)
			if (t.retryAfter != "") != want {
				bad = append(bad, fmt.Sprintf("%s %s: %d %s Retry-After %q", o.method, o.path, t.status, t.problem, t.retryAfter))
			}
		}
	}
	return check{"Retry-After exactly on retryable answers", len(bad) == 0, fmt.Sprintf("%d of %d answers wrong", len(bad), answers), bad}
}

// checkRecords checks each write's final answer against its key's record:
// a 2xx is the record's answer, byte for byte; any other final answer left
// no record.
func checkRecords(ops []*op, after *state) check {
	var bad []string
	writes := 0
	for _, o := range ops {
		if o.key == "" || !o.final {
			continue
		}
		writes++
		t := o.last()
		rec, ok := after.records[o.key]
		switch {
		case t.status/100 == 2 && !ok:
			bad = append(bad, fmt.Sprintf("%s %s key %s: %d with no record", o.method, o.path, o.key, t.status))
		case t.status/100 == 2 && (rec.status != t.status || !bytes.Equal(rec.body, t.body)):
			bad = append(bad, fmt.Sprintf("%s %s key %s: %d %.100s, record %d %.100s", o.method, o.path, o.key, t.status, t.body, rec.status, rec.body))
		case t.status/100 != 2 && ok:
			bad = append(bad, fmt.Sprintf("%s %s key %s: %d %s, yet a record %d", o.method, o.path, o.key, t.status, t.problem, rec.status))
		}
	}
	return check{"every write's answer is its key's record", len(bad) == 0,
		fmt.Sprintf("%d of %d answered writes disagree", len(bad), writes), bad}
}

// deposits returns the deposits that took effect (their key has a
// record), in all and by user, and how many of them were answered 2xx.
func deposits(ops []*op, after *state) (total quire.Money, byUser map[quire.ID]quire.Money, answered, unknown quire.Money) {
	byUser = map[quire.ID]quire.Money{}
	for _, o := range ops {
		if o.kind != "POST /users/{id}/deposit" {
			continue
		}
		if _, ok := after.records[o.key]; !ok {
			continue
		}
		total += o.amount
		byUser[o.user] += o.amount
		if o.final && o.last().status/100 == 2 {
			answered += o.amount
		} else {
			unknown += o.amount
		}
	}
	return total, byUser, answered, unknown
}

// newOrders returns the orders after that were not there before.
func newOrders(before, after *state) map[quire.ID]order {
	out := map[quire.ID]order{}
	for id, o := range after.orders {
		if _, ok := before.orders[id]; !ok {
			out[id] = o
		}
	}
	return out
}

// checkMoney checks that the balances before and the deposits are the
// balances after and the new orders, in cents.
func checkMoney(ops []*op, before, after *state) check {
	var b0, b1, spent quire.Money
	for _, b := range before.balances {
		b0 += b
	}
	for _, b := range after.balances {
		b1 += b
	}
	for _, o := range newOrders(before, after) {
		spent += o.total
	}
	d, _, answered, unknown := deposits(ops, after)
	return check{name: "money is conserved", ok: b0+d == b1+spent, detail: fmt.Sprintf(
		"balances before %s + deposits %s (%s answered 2xx, %s of unknown outcome that took effect) = %s; balances after %s + new orders %s = %s",
		b0, d, answered, unknown, b0+d, b1, spent, b1+spent)}
}

// checkMoneyPerUser checks the same for each user: every order has its
// debit, every deposit its credit.
func checkMoneyPerUser(ops []*op, before, after *state) check {
	_, dep, _, _ := deposits(ops, after)
	spent := map[quire.ID]quire.Money{}
	for _, o := range newOrders(before, after) {
		spent[o.user] += o.total
	}
	var bad []string
	for id, b1 := range after.balances {
		if b0 := before.balances[id]; b0+dep[id] != b1+spent[id] {
			bad = append(bad, fmt.Sprintf("user %d: %s + deposits %s != %s + orders %s", id, b0, dep[id], b1, spent[id]))
		}
	}
	for id := range before.balances {
		if _, ok := after.balances[id]; !ok {
			bad = append(bad, fmt.Sprintf("user %d is gone", id))
		}
	}
	return check{"money is conserved per user", len(bad) == 0, fmt.Sprintf("%d of %d users off", len(bad), len(after.balances)), bad}
}

// checkOrders checks that each payment that took effect (its key has a
// record) made exactly one new order, named by its record and by its 201,
// and that no new order lacks a payment.
func checkOrders(ops []*op, before, after *state) check {
	fresh := newOrders(before, after)
	named := map[quire.ID]string{}
	var bad []string
	answered, unknown := 0, 0
	for _, o := range ops {
		if o.kind != "POST /pay" && o.kind != "POST /products/{id}/buy" {
			continue
		}
		rec, ok := after.records[o.key]
		if !ok {
			continue
		}
		if o.final && o.last().status == http.StatusCreated {
			answered++
		} else {
			unknown++
		}
		id, total, err := orderOf(rec.body)
		if err != nil {
			bad = append(bad, fmt.Sprintf("key %s: record: %v", o.key, err))
			continue
		}
		if o.final && o.last().status == http.StatusCreated {
			if aid, _, err := orderOf(o.last().body); err != nil || aid != id {
				bad = append(bad, fmt.Sprintf("key %s: answered order %d (%v), record order %d", o.key, aid, err, id))
			}
		}
		stored, ok := fresh[id]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("key %s: order %d is not stored", o.key, id))
		case named[id] != "":
			bad = append(bad, fmt.Sprintf("order %d is named by keys %s and %s", id, named[id], o.key))
		case stored.user != o.user || stored.total != total:
			bad = append(bad, fmt.Sprintf("order %d: stored for user %d, %s; paid by user %d, %s", id, stored.user, stored.total, o.user, total))
		}
		named[id] = o.key
	}
	for id := range fresh {
		if named[id] == "" {
			bad = append(bad, fmt.Sprintf("order %d has no payment", id))
		}
	}
	for _, id := range after.dupes {
		bad = append(bad, fmt.Sprintf("order %d is stored twice", id))
	}
	return check{"every payment made one order", len(bad) == 0, fmt.Sprintf(
		"%d payments answered 201 + %d of unknown outcome that took effect; %d new orders", answered, unknown, len(fresh)), bad}
}

// orderOf reads the id and total of an order's JSON.
func orderOf(body []byte) (quire.ID, quire.Money, error) {
	var o struct {
		ID    quire.ID    `json:"id"`
		Total quire.Money `json:"total"`
	}
	if err := json.Unmarshal(body, &o); err != nil || o.ID == 0 {
		return 0, 0, fmt.Errorf("not an order: %.100s", body)
	}
	return o.ID, o.Total, nil
}

// checkUsers checks that the users after are the seeded ones and the
// sign-ups that took effect.
func checkUsers(ops []*op, before, after *state, seeded int) check {
	var bad []string
	if len(before.balances) != seeded {
		bad = append(bad, fmt.Sprintf("%d users before the run, %d seeded", len(before.balances), seeded))
	}
	answered, unknown := 0, 0
	for _, o := range ops {
		rec, ok := after.records[o.key]
		if o.kind != "POST /users" || !ok {
			continue
		}
		if o.final && o.last().status == http.StatusCreated {
			answered++
		} else {
			unknown++
		}
		var u struct {
			ID quire.ID `json:"id"`
		}
		if err := json.Unmarshal(rec.body, &u); err != nil {
			bad = append(bad, fmt.Sprintf("key %s: record: %v", o.key, err))
		} else if _, ok := after.balances[u.ID]; !ok {
			bad = append(bad, fmt.Sprintf("key %s: user %d is not stored", o.key, u.ID))
		}
	}
	want := len(before.balances) + answered + unknown
	if len(after.balances) != want {
		bad = append(bad, fmt.Sprintf("%d users, want %d", len(after.balances), want))
	}
	return check{"users are the seeded ones and the sign-ups", len(bad) == 0, fmt.Sprintf(
		"%d seeded + %d sign-ups answered 201 + %d of unknown outcome that took effect = %d; %d stored",
		seeded, answered, unknown, want, len(after.balances)), bad}
}
