// Package outbox carries the events the stores write into the outbox
// table, in the transactions of their changes (see package dynamo), to
// those who act on them. Deployed, EventBridge Pipes reads the table's
// stream and the events function shapes each new item into its event (see
// Decode); under make run, Follow reads DynamoDB Local's stream and a
// Sender posts each event to EVENTS_URL.
package outbox

import (
	"encoding/json"
	"fmt"

	"github.com/quireapi/quire/shared/quire"
)

// Attribute names the attribute of an outbox item that holds its event's
// JSON, as published.
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
	return ev, nil
}
