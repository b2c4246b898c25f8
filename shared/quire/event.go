package quire

import (
	"encoding/json"
	"strings"
	"time"
)

// An Event is a change of the shop that a system downstream acts on: an
// order placed, a deposit, a closed account, a changed book. The domain
// decides it with the change it reports, and the store writes it in the
// change's own transaction (its outbox), so that it is published if and
// only if the change committed. What a consumer receives is its JSON.
type Event struct {
	// ID is the event's stable id, by which a consumer deduplicates:
	// delivery is at least once, and the outbox keeps the id a change
	// committed with. It is derived from the type, the subject, the
	// content hash of the state the change wrote and the time it was
	// decided: a resource that comes back to a state it had (a price
	// changed, then changed back) is a change with an id of its own.
	ID string `json:"id"`
	// Type names what happened, "order.placed" (see the Event constants).
	Type string `json:"type"`
	// Subject is the path of the resource it happened to, "/orders/42".
	Subject string `json:"subject"`
	// Time is when the change was decided, to the millisecond, in UTC.
	Time time.Time `json:"time"`
	// Data is what a consumer needs of the change: ids and what changed,
	// never a password, a token or an email.
	Data json.RawMessage `json:"data"`
}

// CompareEvents orders events by their time, then their id: the order the
// stores list their outboxes in.
func CompareEvents(a, b Event) int {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// The types of Quire's events.
const (
	EventOrderPlaced     = "order.placed"
	EventUserFunded      = "user.funded"
	EventUserClosed      = "user.closed"
	EventUserDeleted     = "user.deleted"
	EventProductCreated  = "product.created"
	EventProductChanged  = "product.changed"
	EventProductArchived = "product.archived"
)

// EventTypes lists every type of event, in the order the documents show
// them.
var EventTypes = []string{
	EventOrderPlaced, EventUserFunded, EventUserClosed, EventUserDeleted,
	EventProductCreated, EventProductChanged, EventProductArchived,
}

// NewEvent returns the event typ of subject at now carrying data, for the
// change that wrote the state whose content hash is hash (see Event.ID). It panics when
// data cannot be marshalled, which is a bug, as ContentHash does.
func NewEvent(typ, subject, hash string, now time.Time, data any) Event {
	b, err := json.Marshal(data)
	if err != nil {
		panic("quire: event " + typ + ": " + err.Error())
	}
	now = now.UTC().Truncate(time.Millisecond)
	return Event{
		ID:   HashBytes([]byte(typ + " " + subject + " " + hash + " " + now.Format(time.RFC3339Nano))),
		Type: typ, Subject: subject, Time: now, Data: b,
	}
}
