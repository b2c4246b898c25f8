package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// eventTTL is how long the outbox keeps an event after its change: far
// longer than its stream keeps it (24 hours), so that an event that could
// not be delivered can be read again from the table.
const eventTTL = 7 * 24 * time.Hour

// Attributes of an outbox item: the event's JSON whole, as published.
const (
	eventPrefix   = "event#"
	attrEvent     = outbox.Attribute
	attrEventType = "type"
	eventName     = "event" // the outbox's Put in a transaction
)

// published is the Put of ev into the outbox table, for a transaction
// (none when ev is nil): it commits with the change, or not at all. No
// event has ev's id.
func published(table string, ev *quire.Event) tx {
	if ev == nil {
		return nil
	}
	return tx{{eventName, types.TransactWriteItem{Put: &types.Put{
		TableName: &table, Item: eventItem(ev), ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}}}
}

// eventItem is the outbox item of ev.
func eventItem(ev *quire.Event) map[string]types.AttributeValue {
	b, err := json.Marshal(ev)
	if err != nil {
		panic("dynamo: event " + ev.ID + ": " + err.Error()) // a RawMessage that is not JSON: a bug
	}
	return map[string]types.AttributeValue{
		attrPK: str(eventPrefix + ev.ID), attrEventType: str(ev.Type), attrEvent: str(string(b)),
		attrExpiresAt: num(ev.Time.Add(eventTTL).Unix()),
	}
}

// EventStore reads the outbox.
type EventStore struct {
	db     *dynamodb.Client
	events string
}

// NewEventStore returns an EventStore on db with the physical table names t.
func NewEventStore(db *dynamodb.Client, t TableNames) *EventStore {
	return &EventStore{db: db, events: t.Physical(routes.TableEvents)}
}

// Events returns every event the outbox holds, in the order of their
// time, then id: a Scan, for tests and for replaying what was published.
func (s *EventStore) Events(ctx context.Context) ([]quire.Event, error) {
	var out []quire.Event
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: &s.events, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the outbox: %w", err)
		}
		for _, item := range page.Items {
			var r reader
			ev, err := outbox.Decode(r.str(item, attrEvent))
			if r.err != nil {
				err = r.err
			}
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, quire.CompareEvents)
	return out, nil
}
