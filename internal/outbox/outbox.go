// Package outbox carries the events the stores write into the outbox
// table, in the transactions of their changes (see package dynamo), to
// those who act on them. Deployed, EventBridge Pipes reads the table's
// stream, the events function shapes each new item into its event (Shaper),
// and the pipe puts it on the stage's event bus; under make run, package
// local reads DynamoDB Local's stream and posts each event to EVENTS_URL.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quireapi/quire/internal/quire"
)

// Attribute names the attribute of an outbox item that holds its event's
// JSON, as published but for its source.
const Attribute = "event"

// Decode returns the event of an outbox item, from its Attribute's string.
func Decode(event string) (quire.Event, error) {
	var ev quire.Event
	if err := json.Unmarshal([]byte(event), &ev); err != nil {
		return quire.Event{}, fmt.Errorf("an outbox item's event: %w", err)
	}
	if ev.ID == "" || ev.Type == "" || len(ev.Data) == 0 {
		return quire.Event{}, fmt.Errorf("an outbox item's event has no id, type or data: %.100s", event)
	}
	if ev.DataSchema == "" { // written before events named their version: all were version 1
		ev.DataSchema = quire.EventSchema(ev.Type, 1)
	}
	return ev, nil
}

// Record is a record of the outbox table's stream as EventBridge Pipes
// passes it to its enrichment, with what Shape reads of it: the pipe's
// filter lets new items (INSERT) alone through.
type Record struct {
	EventName string `json:"eventName"`
	DynamoDB  struct {
		SequenceNumber string `json:"SequenceNumber"`
		NewImage       map[string]struct {
			S *string `json:"S"`
		} `json:"NewImage"`
	} `json:"dynamodb"`
}

// Shaper returns the pipe's enrichment for the stack whose events come
// from source (quire.EventSource): it returns the event of each new outbox
// item of records, in their order, from source, which the pipe puts on the
// event bus, each as an EventBridge event whose detail it is. A record it
// cannot read fails the whole batch, which the pipe retries and then sends
// to its dead-letter queue: an event is never dropped.
func Shaper(source string) func(context.Context, []Record) ([]quire.Event, error) {
	return func(_ context.Context, records []Record) ([]quire.Event, error) {
		out := make([]quire.Event, 0, len(records))
		for _, r := range records {
			if r.EventName != "INSERT" {
				continue
			}
			s := r.DynamoDB.NewImage[Attribute].S
			if s == nil {
				return nil, fmt.Errorf("the outbox record %s has no %s", r.DynamoDB.SequenceNumber, Attribute)
			}
			ev, err := Decode(*s)
			if err != nil {
				return nil, fmt.Errorf("the outbox record %s: %w", r.DynamoDB.SequenceNumber, err)
			}
			ev.Source = source
			out = append(out, ev)
		}
		return out, nil
	}
}
