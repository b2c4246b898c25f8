package quire

import (
	"testing"
	"time"
)

// An event's id is the same for the same change decided at the same
// moment, and another for a resource that comes back to a state it had
// later on: the outbox takes each id once.
func TestEventID(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)
	ev := NewEvent(EventProductChanged, "/products/1", "hash", at, map[string]int{"product_id": 1})
	if again := NewEvent(EventProductChanged, "/products/1", "hash", at.Add(400*time.Microsecond), map[string]int{"product_id": 1}); again.ID != ev.ID {
		t.Errorf("the same change in the same millisecond: ids %s and %s", ev.ID, again.ID)
	}
	for _, other := range []Event{
		NewEvent(EventProductChanged, "/products/1", "hash", at.Add(time.Hour), nil),
		NewEvent(EventProductChanged, "/products/2", "hash", at, nil),
		NewEvent(EventProductArchived, "/products/1", "hash", at, nil),
		NewEvent(EventProductChanged, "/products/1", "other", at, nil),
	} {
		if other.ID == ev.ID {
			t.Errorf("%s of %s at %v has the id of %s of %s at %v", other.Type, other.Subject, other.Time, ev.Type, ev.Subject, ev.Time)
		}
	}
	if len(ev.ID) != HashLen || !ev.Time.Equal(at.Truncate(time.Millisecond)) || string(ev.Data) != `{"product_id":1}` {
		t.Errorf("NewEvent = %+v", ev)
	}
}
