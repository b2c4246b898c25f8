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
	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// A Follower whose iterator expires (the machine slept for 15 minutes;
// DynamoDB Local's iterators never expire, so the fault proxy answers the
// GetRecords with ExpiredIteratorException) reads on after the last record
// it read, even when getting the new iterator fails at first: the event it
// had delivered does not come again, and the next one comes once.
func TestFollowerAfterAnExpiredIterator(t *testing.T) {
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
	f, err := NewFollower(t.Context(), streams, *desc.Table.LatestStreamArn)
	if err != nil {
		t.Fatal(err)
	}

	var delivered []string
	deliver := func(ev quire.Event) { delivered = append(delivered, ev.Subject) }
	publish := func(subject string) {
		t.Helper()
		ev := quire.NewEvent(quire.EventUserFunded, subject, "hash", time.Now(), map[string]int{"user_id": 7})
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "event#" + ev.ID}, outbox.Attribute: &types.AttributeValueMemberS{Value: string(b)},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// pollFor polls until want events have come, and a few times more,
	// polling again after an error as Run does; it returns the errors.
	pollFor := func(want int) (failed int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(delivered) < want && time.Now().Before(deadline); {
			if f.poll(t.Context(), deliver) != nil {
				failed++
			}
		}
		for range 3 {
			if f.poll(t.Context(), deliver) != nil {
				failed++
			}
		}
		return failed
	}

	publish("/users/1")
	if n := pollFor(1); n != 0 {
		t.Fatalf("%d polls failed with no fault", n)
	}
	p.Set(ddbfault.Rule{Fault: ddbfault.ExpiredIterator, Operation: "GetRecords", Count: 1},
		ddbfault.Rule{Fault: ddbfault.Internal, Operation: "GetShardIterator", Count: 1})
	publish("/users/2")
	if n := pollFor(2); n != 1 {
		t.Errorf("%d polls failed, want the one whose new iterator could not be had", n)
	}
	if got := p.Injected(); got[ddbfault.ExpiredIterator] != 1 || got[ddbfault.Internal] != 1 {
		t.Fatalf("faults injected %v, want 1 expired iterator and 1 internal error", got)
	}
	if want := []string{"/users/1", "/users/2"}; !slices.Equal(delivered, want) {
		t.Errorf("delivered %v, want %v: each event once, in order", delivered, want)
	}
}
