package ddbfault_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
)

// hold is how long the tests' Conflict rules hold a transaction: long
// enough for a test to send other calls meanwhile.
const hold = 300 * time.Millisecond

// inFlight starts a transaction through p in the background, waits until
// its items are in flight (for the rule's hold from then on), and returns
// the channel of its error.
func inFlight(t *testing.T, p *ddbfault.Proxy, db *dynamodb.Client, items ...types.TransactWriteItem) <-chan error {
	t.Helper()
	before := p.Held()
	done := make(chan error, 1)
	go func() {
		_, err := db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: items})
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); p.Held() < before+len(items); {
		if time.Now().After(deadline) {
			t.Fatal("the transaction never got in flight")
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func isConflict(err error) bool {
	_, ok := errors.AsType[*types.TransactionConflictException](err)
	return ok
}

// reasons returns the cancellation reasons' codes of a cancelled
// transaction, failing the test for any other error.
func reasons(t *testing.T, err error) []string {
	t.Helper()
	tce, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		t.Fatalf("error %v, want TransactionCanceledException", err)
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	return codes
}

// A transaction holds its items while in flight: another transaction
// touching one of them is cancelled with TransactionConflict for that item
// and None for the others, a single write of one fails with
// TransactionConflictException, a transactional read of one is cancelled;
// none of them reaches DynamoDB. Transactions and writes on other items go
// through at the same time, and the items are free again once the
// transaction is done.
func TestConflicts(t *testing.T) {
	p, db, tables := setupTables(t, ddbfault.Rule{Fault: ddbfault.Conflict, Delay: hold})
	users, orders := tables.Physical(routes.TableUsers), tables.Physical(routes.TableOrders)
	order := func(pk, id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "id": &types.AttributeValueMemberN{Value: id}}
	}
	start := time.Now()
	first := inFlight(t, p, db,
		types.TransactWriteItem{Put: &types.Put{TableName: &users, Item: key("a")}},
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &users, Key: key("b"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		types.TransactWriteItem{Put: &types.Put{TableName: &orders, Item: order("user#1", "10")}},
	)

	// Another transaction on a and c: cancelled for a.
	_, err := db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &users, Item: key("c")}},
		{Update: &types.Update{TableName: &users, Key: key("a"), UpdateExpression: aws.String("SET n = :n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "1"}}}},
	}})
	if diff := cmp.Diff([]string{"None", "TransactionConflict"}, reasons(t, err)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	// The order, by its key written another way, and the checked item:
	// a ConditionCheck holds its item as a write does.
	_, err = db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: &orders, Key: order("user#1", "1e1")}},
		{Put: &types.Put{TableName: &users, Item: key("b")}},
	}})
	if diff := cmp.Diff([]string{"TransactionConflict", "TransactionConflict"}, reasons(t, err)); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}

	// Single writes of a held item.
	for name, write := range map[string]func() error{
		"PutItem": func() error { return put(t, db, users, "a") },
		"UpdateItem": func() error {
			_, err := db.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{TableName: &users, Key: key("b"), UpdateExpression: aws.String("SET n = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "1"}}})
			return err
		},
		"DeleteItem": func() error {
			_, err := db.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: &orders, Key: order("user#1", "10")})
			return err
		},
	} {
		if err := write(); !isConflict(err) {
			t.Errorf("%s of a held item: %v, want TransactionConflictException", name, err)
		}
	}

	// A transactional read of a held item; a plain read goes through.
	_, err = db.TransactGetItems(t.Context(), &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: &users, Key: key("d")}},
		{Get: &types.Get{TableName: &users, Key: key("a")}},
	}})
	if diff := cmp.Diff([]string{"None", "TransactionConflict"}, reasons(t, err)); diff != "" {
		t.Errorf("TransactGetItems reasons (-want +got):\n%s", diff)
	}
	exists(t, db, users, "a")

	// A transaction and a write on other items go through meanwhile.
	if err := put(t, db, users, "e"); err != nil {
		t.Errorf("PutItem of another item: %v", err)
	}
	_, err = db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &users, Item: key("c")}},
		{Put: &types.Put{TableName: &orders, Item: order("user#1", "11")}},
	}})
	if err != nil {
		t.Errorf("a transaction on other items: %v", err)
	}

	if err := <-first; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	if d := time.Since(start); d < hold {
		t.Errorf("the first transaction took %v, want at least the %v hold", d, hold)
	}
	if n := p.Injected()[ddbfault.Conflict]; n != 6 {
		t.Errorf("Injected()[conflict] = %d, want 6", n)
	}
	if !exists(t, db, users, "a") || !exists(t, db, users, "c") || exists(t, db, users, "b") {
		t.Error("the items are not as the transactions that went through left them")
	}

	// Free again: a write and a transaction of the first one's items.
	if err := put(t, db, users, "a"); err != nil {
		t.Errorf("PutItem after the transaction: %v", err)
	}
	_, err = db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &users, Item: key("b")}},
		{Delete: &types.Delete{TableName: &orders, Key: order("user#1", "10")}},
	}})
	if err != nil {
		t.Errorf("a transaction after the first one: %v", err)
	}
}

// A Conflict rule's table, count and removal bound what it injects.
func TestConflictRules(t *testing.T) {
	p, db, users := setup(t)
	write := func() error { return put(t, db, users, "a") }
	holdA := func() <-chan error {
		return inFlight(t, p, db, types.TransactWriteItem{Put: &types.Put{TableName: &users, Item: key("a")}})
	}

	long := 5 * time.Second
	p.Set(ddbfault.Rule{Fault: ddbfault.Conflict, Delay: long, Table: routes.TableCarts})
	start := time.Now()
	_, err := db.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &users, Item: key("a")}},
	}})
	if d := time.Since(start); err != nil || d >= long {
		t.Errorf("a transaction on another table: %v after %v, want it forwarded without the rule's hold", err, d)
	}

	p.Set(ddbfault.Rule{Fault: ddbfault.Conflict, Delay: hold, Count: 1})
	first := holdA()
	if err := write(); !isConflict(err) {
		t.Errorf("the first conflict: %v, want TransactionConflictException", err)
	}
	if err := write(); err != nil {
		t.Errorf("a conflict past the rule's count: %v, want it let through", err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	p.Set(ddbfault.Rule{Fault: ddbfault.Conflict, Delay: hold})
	first = holdA()
	p.Set()
	if err := write(); err != nil {
		t.Errorf("a write with no rules: %v", err)
	}
	if err := <-first; err != nil || p.Held() != 0 {
		t.Errorf("the transaction held before the rules changed: %v, %d items still held", err, p.Held())
	}
	if n := p.Injected()[ddbfault.Conflict]; n != 1 {
		t.Errorf("Injected()[conflict] = %d, want 1", n)
	}
}
