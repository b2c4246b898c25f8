package outbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// Decode takes an outbox item's event as the stores write it, and refuses
// what is not an event.
func TestDecode(t *testing.T) {
	ev := quire.NewEvent(quire.EventUserClosed, "/users/7", "hash", time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), map[string]int{"user_id": 7})
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(string(b))
	if err != nil || got.ID != ev.ID || got.Type != ev.Type || !got.Time.Equal(ev.Time) || string(got.Data) != `{"user_id":7}` {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, ev)
	}
	for _, bad := range []string{"", "{}", `{"id":"x","type":"user.closed"}`, `{"id":"","type":"t","data":{}}`, "[1]", `{"id":1}`} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) took it", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(`{"id":"a","type":"order.placed","subject":"/orders/1","time":"2026-11-27T10:00:00Z","data":{"order_id":1}}`)
	f.Add(`{"id":"a","type":"t","data":null}`)
	f.Fuzz(func(t *testing.T, s string) {
		ev, err := Decode(s)
		if err == nil && (ev.ID == "" || ev.Type == "" || len(ev.Data) == 0) {
			t.Errorf("Decode(%q) = %+v without an error", s, ev)
		}
	})
}
