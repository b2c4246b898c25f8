package local

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// A Follower whose stream loses its place reads on from the outbox table,
// even when taking the stream up again fails at first: the event it had
// delivered does not come again, and the next one comes once. The stream
// loses its place when an iterator expires (the machine slept for 15
// minutes) or when the records after it were trimmed (the Follower was
// held back for 24 hours by a receiver that was down); no test waits that
// long, so the fault proxy answers the GetRecords with the error.
func TestFollowerAfterAnExpiredIterator(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each fault, without DynamoDB Local
	for _, fault := range []ddbfault.Kind{ddbfault.ExpiredIterator, ddbfault.Trimmed} {
		t.Run(string(fault), func(t *testing.T) {
			o := newTestOutbox(t)
			f, err := NewFollower(t.Context(), o.streams, o.arn, o.events, nil)
			if err != nil {
				t.Fatal(err)
			}
			o.publish("/users/1", time.Now())
			if n := o.pollFor(f, 1); n != 0 {
				t.Fatalf("%d polls failed with no fault", n)
			}
			o.proxy.Set(ddbfault.Rule{Fault: fault, Operation: "GetRecords", Count: 1},
				ddbfault.Rule{Fault: ddbfault.Internal, Operation: "GetShardIterator", Count: 1})
			o.publish("/users/2", time.Now())
			if n := o.pollFor(f, 2); n != 1 {
				t.Errorf("%d polls failed, want the one whose new iterator could not be had", n)
			}
			if got := o.proxy.Injected(); got[fault] != 1 || got[ddbfault.Internal] != 1 {
				t.Fatalf("faults injected %v, want 1 %s and 1 internal error", got, fault)
			}
			if want := []string{"/users/1", "/users/2"}; !slices.Equal(o.delivered, want) {
				t.Errorf("delivered %v, want %v: each event once, in order", o.delivered, want)
			}
		})
	}
}

// A Follower started from a checkpoint (make run started again with
// DATA_DIR) delivers first, in the order of their time, the events of the
// outbox the checkpoint does not name, then the stream's: the event
// delivered last does not come again, nor one delivered long before it;
// one decided just before it but committed after it does, as do those
// committed after it, before the restart. The stream then keeps no record
// of them: the table is read, as it would be a day later, when the stream
// has trimmed them.
func TestFollowerAfterARestart(t *testing.T) {
	o := newTestOutbox(t)
	last := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	before := o.publish("/users/0", last.Add(-2*time.Minute))
	delivered := o.publish("/users/1", last)
	o.publish("/users/1b", last.Add(-5*time.Second)) // decided before the last delivered, committed after it
	o.publish("/users/2", last.Add(time.Second))
	o.publish("/users/3", last.Add(2*time.Second))
	cp := NewCheckpoint(last.Add(-time.Hour))
	cp.Add(before)
	cp.Add(delivered)

	f, err := NewFollower(t.Context(), o.streams, o.arn, o.events, &cp)
	if err != nil {
		t.Fatal(err)
	}
	if n := o.pollFor(f, 3); n != 0 {
		t.Fatalf("%d polls failed", n)
	}
	o.publish("/users/4", time.Now())
	if n := o.pollFor(f, 4); n != 0 {
		t.Fatalf("%d polls failed", n)
	}
	if want := []string{"/users/1b", "/users/2", "/users/3", "/users/4"}; !slices.Equal(o.delivered, want) {
		t.Errorf("delivered %v, want %v", o.delivered, want)
	}
	if len(cp.Delivered) != 1 {
		t.Errorf("the checkpoint given names %d events, want the 1 it named: the Follower keeps its own", len(cp.Delivered))
	}
}

// testOutbox is an outbox table of DynamoDB Local, whose stream is read
// through a fault proxy, and the events a Follower delivered of it.
type testOutbox struct {
	t         *testing.T
	db        *dynamodb.Client
	table     string
	events    *dynamo.EventStore
	proxy     *ddbfault.Proxy
	streams   *dynamodbstreams.Client
	arn       string
	delivered []string // the subjects of the events delivered
}

// newTestOutbox returns an empty outbox table; it skips the test without
// DynamoDB Local.
func newTestOutbox(t *testing.T) *testOutbox {
	t.Helper()
	db, tables := dynamotest.New(t)
	p, err := ddbfault.Start(dynamotest.Endpoint(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	table := tables.Physical(routes.TableEvents)
	desc, err := db.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	streams := dynamodbstreams.New(dynamodbstreams.Options{
		// One attempt a call: a fault reaches the Follower as it is.
		Region: "us-east-1", BaseEndpoint: aws.String(p.URL()), Retryer: aws.NopRetryer{},
		Credentials: awsenv.Env{}.Credentials(), // DynamoDB Local's, as make run's follower has them
	})
	return &testOutbox{t: t, db: db, table: table, events: dynamo.NewEventStore(db, tables), proxy: p,
		streams: streams, arn: *desc.Table.LatestStreamArn}
}

// publish commits an event of subject decided at when into the outbox.
func (o *testOutbox) publish(subject string, when time.Time) quire.Event {
	o.t.Helper()
	ev := quire.NewEvent(quire.EventUserFunded, subject, "hash", when, map[string]int{"user_id": 7})
	b, err := json.Marshal(ev)
	if err != nil {
		o.t.Fatal(err)
	}
	_, err = o.db.PutItem(o.t.Context(), &dynamodb.PutItemInput{TableName: &o.table, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "event#" + ev.ID}, outbox.Attribute: &types.AttributeValueMemberS{Value: string(b)},
	}})
	if err != nil {
		o.t.Fatal(err)
	}
	return ev
}

// pollFor polls f until want events have come, and a few times more,
// polling again after an error as Run does; it returns the errors.
func (o *testOutbox) pollFor(f *Follower, want int) (failed int) {
	o.t.Helper()
	deliver := func(ev quire.Event) { o.delivered = append(o.delivered, ev.Subject) }
	for deadline := time.Now().Add(10 * time.Second); len(o.delivered) < want && time.Now().Before(deadline); {
		if f.poll(o.t.Context(), deliver) != nil {
			failed++
		}
	}
	for range 3 {
		if f.poll(o.t.Context(), deliver) != nil {
			failed++
		}
	}
	return failed
}
