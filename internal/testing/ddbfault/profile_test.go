package ddbfault

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseProfile(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Rule
	}{
		{"", nil},
		{"throttle", []Rule{{Fault: Throttle}}},
		{"throttle 5%, internal 1% Query", []Rule{
			{Fault: Throttle, Probability: 0.05}, {Fault: Internal, Probability: 0.01, Operation: "Query"},
		}},
		{" delay 2s 10% GetItem users ", []Rule{{Fault: Delay, Delay: 2 * time.Second, Probability: 0.1, Operation: "GetItem", Table: "users"}}},
		{"lost x1 TransactWriteItems", []Rule{{Fault: Lost, Count: 1, Operation: "TransactWriteItems"}}},
		{"reset 100% x3 orders", []Rule{{Fault: Reset, Probability: 1, Count: 3, Table: "orders"}}},
		{"conflict", []Rule{{Fault: Conflict}}},
		{"conflict 20ms x2 TransactWriteItems carts", []Rule{{Fault: Conflict, Delay: 20 * time.Millisecond, Count: 2, Operation: "TransactWriteItems", Table: "carts"}}},
		{"contended", []Rule{{Fault: Conflict, Delay: 20 * time.Millisecond}}},
	} {
		got, err := ParseProfile(c.in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseProfile(%q) (-want +got):\n%s", c.in, diff)
		}
	}
	for name := range Profiles {
		if rules, err := ParseProfile(name); err != nil || len(rules) == 0 {
			t.Errorf("profile %s: %v, %d rules", name, err, len(rules))
		}
	}
	for _, bad := range []string{
		"explode", "throttle 0%", "throttle 101%", "throttle x0", "delay", "delay 5%", "throttle 2s",
		"delay -1s", "delay 2h", "throttle 5%%", "throttle 1e400%", "throttle NaN%",
	} {
		if _, err := ParseProfile(bad); !errors.Is(err, ErrProfile) {
			t.Errorf("ParseProfile(%q) = %v, want ErrProfile", bad, err)
		}
	}
}

// Any text parses or fails with ErrProfile, and what parses prints as a
// profile that parses to the same rules.
func FuzzParseProfile(f *testing.F) {
	for _, s := range []string{"throttle 5%", "delay 2s 10% GetItem users", "conflict 20ms x1", "lost x1 TransactWriteItems, reset 1%", "flaky", ",,", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseProfile(s)
		if err != nil {
			if !errors.Is(err, ErrProfile) {
				t.Fatalf("error %v does not wrap ErrProfile", err)
			}
			return
		}
		var text string
		for i, r := range rules {
			if i > 0 {
				text += ", "
			}
			text += r.String()
		}
		again, err := ParseProfile(text)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, text, err)
		}
		if len(again) != len(rules) {
			t.Fatalf("%q printed as %q: %d rules, then %d", s, text, len(rules), len(again))
		}
		for i := range rules {
			a, b := rules[i], again[i]
			if a.Fault != b.Fault || a.Operation != b.Operation || a.Table != b.Table || a.Count != b.Count || a.Delay != b.Delay {
				t.Fatalf("%q printed as %q: rule %d %+v, then %+v", s, text, i, a, b)
			}
		}
	})
}

// Any request body parses to the tables it names, or to none, without a
// panic; a transaction's item count is its number of items.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"TableName":"t-users","Key":{}}`,
		`{"RequestItems":{"a":{},"b":{}}}`,
		`{"TransactItems":[{"Put":{"TableName":"x"}},{"ConditionCheck":{"TableName":"y"}}]}`,
		`{"TransactItems":[{}]}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tables, items := parse(body)
		if items < 0 || items > len(body) {
			t.Fatalf("%d items in %d bytes", items, len(body))
		}
		for _, tb := range tables {
			if len(tb) > len(body) {
				t.Fatalf("table name %q longer than the body", tb)
			}
		}
	})
}
