package quire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Money
	}{
		{"0", 0}, {"12", 1200}, {"12.5", 1250}, {"12.50", 1250}, {"0.05", 5}, {"-1.05", -105},
		{"100000000000", 10_000_000_000_000},
	} {
		got, err := ParseMoney(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "-", ".5", "1.", "1.234", "01", "1e2", "+1", `"1"`, "1,5", "100000000000.01", "9999999999999", "NaN", " 1"} {
		if got, err := ParseMoney(in); !errors.Is(err, ErrMoney) {
			t.Errorf("ParseMoney(%q) = %d, %v; want ErrMoney", in, got, err)
		}
	}
}

func TestMoneyJSON(t *testing.T) {
	for _, m := range []Money{0, 5, 1250, -105, MaxMoney} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Money
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("%d -> %s -> %d, %v", m, b, back, err)
		}
	}
	b, _ := json.Marshal(struct{ B Money }{1250})
	if string(b) != `{"B":12.50}` {
		t.Errorf("got %s", b)
	}
	// What is not an amount is a value of the wrong type, which the
	// decoder says the field of.
	for _, body := range []string{`{"amount":1.234}`, `{"amount":"5"}`, `{"amount":1e2}`, `{"amount":100000000000.01}`} {
		var d struct{ Amount Money }
		err := json.Unmarshal([]byte(body), &d)
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok || te.Field != "Amount" || te.Type != reflect.TypeFor[Money]() {
			t.Errorf("%s: %v, want a type error naming Amount", body, err)
		}
	}
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"0", "12.50", "-1.05", "1e3", "01", "1.234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s)
		if err != nil {
			return
		}
		if m > MaxMoney || m < -MaxMoney {
			t.Fatalf("ParseMoney(%q) = %d, beyond MaxMoney", s, m)
		}
		back, err := ParseMoney(m.String())
		if err != nil || back != m {
			t.Fatalf("ParseMoney(%q) = %d, whose String %q parses to %d, %v", s, m, m.String(), back, err)
		}
	})
}

func TestParseID(t *testing.T) {
	for _, ok := range []string{"1", "42", strconv.FormatInt(int64(MaxID), 10)} {
		if id, err := ParseID(ok); err != nil || id.String() != ok {
			t.Errorf("ParseID(%q) = %v, %v", ok, id, err)
		}
	}
	for _, bad := range []string{"", "0", "-1", "+1", "01", "1.0", "1e3", "abc", " 1", strconv.FormatInt(int64(MaxID)+1, 10), "99999999999999999999"} {
		if id, err := ParseID(bad); ErrorCode(err) != ENOTFOUND {
			t.Errorf("ParseID(%q) = %v, %v; want ENOTFOUND", bad, id, err)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "0", "9007199254740991", "9007199254740992", "-5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			if ErrorCode(err) != ENOTFOUND {
				t.Fatalf("ParseID(%q): error code %s", s, ErrorCode(err))
			}
			return
		}
		if id < 1 || id > MaxID || id.String() != s {
			t.Fatalf("ParseID(%q) = %d", s, id)
		}
	})
}

func TestNewID(t *testing.T) {
	for _, now := range []time.Time{idEpoch.Add(-time.Hour), time.Now(), idEpoch.AddDate(69, 0, 0)} {
		id := NewID(now)
		if id < 1 || id > MaxID {
			t.Errorf("NewID(%v) = %d, outside 1..MaxID", now, id)
		}
	}
	a, b := NewID(time.Now()), NewID(time.Now().Add(time.Second))
	if b <= a {
		t.Errorf("IDs do not grow with time: %d then %d", a, b)
	}
}

// ErrMoney names MaxMoney's bounds, written out.
func TestErrMoney(t *testing.T) {
	if want := fmt.Sprintf("must be a decimal number with at most two fraction digits, from %s to %s", -MaxMoney, MaxMoney); ErrMoney.Error() != want {
		t.Errorf("ErrMoney = %q, want %q", ErrMoney, want)
	}
}

// TestEventTime: an event's time is written to the millisecond with three
// fractional digits, trailing zeros and all, and reads back as it was.
func TestEventTime(t *testing.T) {
	for at, want := range map[time.Time]string{
		time.Date(2026, 12, 7, 10, 0, 8, 480_000_000, time.UTC):                  `"2026-12-07T10:00:08.480Z"`,
		time.Date(2026, 12, 7, 10, 0, 8, 0, time.UTC):                            `"2026-12-07T10:00:08.000Z"`,
		time.Date(2026, 12, 7, 11, 0, 8, 7_000_000, time.FixedZone("CET", 3600)): `"2026-12-07T10:00:08.007Z"`,
	} {
		ev := NewEvent(EventUserFunded, "/users/2", "hash", at, map[string]int{"user_id": 2})
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Time json.RawMessage `json:"time"`
		}
		if err := json.Unmarshal(b, &got); err != nil || string(got.Time) != want {
			t.Errorf("%v: time %s (%v), want %s", at, got.Time, err, want)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil || !back.Time.Equal(ev.Time) || back.ID != ev.ID || string(back.Data) != string(ev.Data) {
			t.Errorf("%s reads back as %+v, %v", b, back, err)
		}
	}
}

// TestEventEnvelope: an event is a CloudEvent 1.0 in structured JSON, with
// every attribute Quire's consumers read; its source is the publisher's to
// set; another version of it is the same change, with an id and a
// dataschema of its own.
func TestEventEnvelope(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 8, 480_000_000, time.UTC)
	ev := NewEvent(EventUserFunded, "/users/2", "hash", at, map[string]int{"user_id": 2})
	ev.Source = EventSource("Quire-prod")
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"specversion": "1.0", "id": ev.ID, "source": "urn:quire:Quire-prod", "type": "user.funded", "subject": "/users/2",
		"time": "2026-12-07T10:00:08.480Z", "datacontenttype": "application/json",
		"dataschema": "urn:quire:events:user.funded:v1", "data": map[string]any{"user_id": float64(2)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the event is %s, want %v", b, want)
	}
	v2 := ev.Version(2, map[string]string{"account": "2"})
	if v2.ID == ev.ID || v2.DataSchema != "urn:quire:events:user.funded:v2" || v2.Type != ev.Type || v2.Subject != ev.Subject ||
		!v2.Time.Equal(ev.Time) || string(v2.Data) != `{"account":"2"}` {
		t.Errorf("version 2 of %+v is %+v", ev, v2)
	}
}
