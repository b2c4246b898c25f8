package quire

// What a change decides besides its own fields: the time it is written at
// (WriteTime), the content hash its ETag is made from (ContentHash), what a
// conditional write requires of the stored state (Precondition), and the
// event a system downstream acts on (NewEvent).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// HashLen is the length of a content hash: 128 bits of SHA-256 in
// unpadded base64url.
const HashLen = 22

// HashBytes returns the content hash of b.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// ContentHash returns the content hash of v: the hash of its JSON encoding,
// which is the same for equal values (struct fields in order, map keys
// sorted). Every stored resource carries the hash of its content, and its
// ETag is made from it. It panics when v cannot be marshalled, which is a
// bug: it is only called on Quire's own domain values.
func ContentHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("quire: content hash of %T: %v", v, err))
	}
	return HashBytes(b)
}

// WriteTime is the updated_at of a write at now over a resource last
// written at prev: now to the millisecond, in UTC, and always after prev.
func WriteTime(now, prev time.Time) time.Time {
	t := now.UTC().Truncate(time.Millisecond)
	if !t.After(prev) {
		t = prev.Add(time.Millisecond)
	}
	return t
}

// Precondition is what a conditional write requires of the stored state of
// its resource, from the request's If-Match and If-None-Match headers. The
// zero Precondition requires nothing.
type Precondition struct {
	// Match lists the content hashes the stored resource may have
	// (If-Match with entity tags); empty requires none.
	Match []string
	// Exists requires that the resource exists (If-Match: *).
	Exists bool
	// Absent requires that it does not (If-None-Match: *): a create-only
	// write.
	Absent bool
	// NoneOf lists content hashes the resource must not have
	// (If-None-Match with entity tags).
	NoneOf []string
}

// Check returns an EPRECONDITION error when a resource whose stored content
// hash is hash ("" when it does not exist) fails p, and nil otherwise.
func (p Precondition) Check(hash string) error {
	exists := hash != ""
	switch {
	case p.Absent && exists:
		return Errorf(EPRECONDITION, "The resource exists already, and If-None-Match: * asked to create it only.")
	case p.Exists && !exists:
		return Errorf(EPRECONDITION, "The resource does not exist, and If-Match: * asked for one that does.")
	case len(p.Match) > 0 && (!exists || !slices.Contains(p.Match, hash)):
		return Errorf(EPRECONDITION, "The resource changed since the ETag in If-Match was sent; nothing was changed. GET it again and retry.")
	case exists && slices.Contains(p.NoneOf, hash):
		return Errorf(EPRECONDITION, "The resource has an ETag listed in If-None-Match; nothing was changed.")
	}
	return nil
}

// An Event is a change of the shop that a system downstream acts on: an
// order placed, a deposit, a closed account, a changed book. The domain
// decides it with the change it reports, and the store writes it in the
// change's own transaction (its outbox), so that it is published if and
// only if the change committed. What a consumer receives is its JSON, a
// CloudEvent 1.0 in structured mode.
type Event struct {
	// ID is the event's stable id, by which a consumer deduplicates:
	// delivery is at least once, and the outbox keeps the id a change
	// committed with. It is derived from the type, the subject, the
	// content hash of the state the change wrote and the time it was
	// decided: a resource that comes back to a state it had (a price
	// changed, then changed back) is a change with an id of its own.
	ID string `json:"id"`
	// Source names the stack that published it (EventSource): the
	// publisher sets it, deployed and under make run alike; the outbox
	// holds events without it.
	Source string `json:"source,omitempty"`
	// Type names what happened, "order.placed" (see the Event constants).
	Type string `json:"type"`
	// Subject is the path of the resource it happened to, "/orders/42".
	Subject string `json:"subject"`
	// Time is when the change was decided, to the millisecond, in UTC.
	Time time.Time `json:"time"`
	// DataSchema names the version of its type that Data follows
	// (EventSchema): a breaking change to a type's data is a new version.
	DataSchema string `json:"dataschema"`
	// Data is what a consumer needs of the change: ids and what changed,
	// never a password, a token or an email.
	Data json.RawMessage `json:"data"`
}

// What every event's envelope says: the CloudEvents version it follows,
// and its data's media type.
const (
	EventSpecVersion = "1.0"
	EventContentType = "application/json"
)

// EventTimeFormat is how an event's time is written: RFC 3339 in UTC, to
// the millisecond, always with three fractional digits
// ("2026-12-07T10:00:08.480Z"), so that every event's time has one length
// and sorts as text.
const EventTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes e as a consumer receives it: a CloudEvent in
// structured JSON, its time in EventTimeFormat.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		SpecVersion string `json:"specversion"`
		plain
		Time        string `json:"time"`
		ContentType string `json:"datacontenttype"`
	}{EventSpecVersion, plain(e), e.Time.UTC().Format(EventTimeFormat), EventContentType})
}

// EventSource is the source of the events of the stack named stack
// ("Quire", "Quire-prod"): "urn:quire:Quire-prod". Under make run, the
// stack is Stack.
func EventSource(stack string) string { return "urn:quire:" + stack }

// Stack is the name of the stack of the stage without a name of its own,
// which make run stands for; a named stage's is Stack-<stage>.
const Stack = "Quire"

// EventSchema names version version of the events of type typ, as their
// dataschema: "urn:quire:events:order.placed:v1". The documents' webhooks
// describe each version, under the same name.
func EventSchema(typ string, version int) string {
	return fmt.Sprintf("urn:quire:events:%s:v%d", typ, version)
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
	EventUserCreated     = "user.created"
	EventUserFunded      = "user.funded"
	EventUserChanged     = "user.changed"
	EventUserClosed      = "user.closed"
	EventUserReopened    = "user.reopened"
	EventUserDeleted     = "user.deleted"
	EventAuthorCreated   = "author.created"
	EventConfigChanged   = "config.changed"
	EventProductCreated  = "product.created"
	EventProductChanged  = "product.changed"
	EventProductArchived = "product.archived"
)

// EventTypes lists every type of event, in the order the documents show
// them.
var EventTypes = []string{
	EventOrderPlaced, EventUserCreated, EventUserChanged, EventUserFunded, EventUserClosed, EventUserReopened, EventUserDeleted,
	EventAuthorCreated, EventProductCreated, EventProductChanged, EventProductArchived, EventConfigChanged,
}

// NewEvent returns the event typ of subject at now carrying data, version
// 1 of its type, for the change that wrote the state whose content hash is
// hash (see Event.ID). It panics when data cannot be marshalled, which is
// a bug, as ContentHash does.
func NewEvent(typ, subject, hash string, now time.Time, data any) Event {
	b, err := json.Marshal(data)
	if err != nil {
		panic("quire: event " + typ + ": " + err.Error())
	}
	now = now.UTC().Truncate(time.Millisecond)
	return Event{
		ID:   HashBytes([]byte(typ + " " + subject + " " + hash + " " + now.Format(time.RFC3339Nano))),
		Type: typ, Subject: subject, Time: now, DataSchema: EventSchema(typ, 1), Data: b,
	}
}

// Version returns version n of e, carrying data: the same change as its
// type's version n describes it. Through the deprecation window of a
// breaking change to a type's data, the domain publishes both versions of
// each change, each with an id of its own (docs/events.md).
func (e Event) Version(n int, data any) Event {
	b, err := json.Marshal(data)
	if err != nil {
		panic("quire: event " + e.Type + ": " + err.Error())
	}
	e.DataSchema = EventSchema(e.Type, n)
	e.ID = HashBytes([]byte(e.ID + " " + e.DataSchema))
	e.Data = b
	return e
}
