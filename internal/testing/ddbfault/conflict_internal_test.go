package ddbfault

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Keys of one item compare equal however the request lays them out, and
// keys of different items never do.
func TestItemKey(t *testing.T) {
	key := func(s string) attributes {
		var a attributes
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	same := [][2]string{
		{`{"pk":{"S":"user#1"},"id":{"N":"10"}}`, `{"id":{"N":"1e1"},"pk":{"S":"user#1"}}`},
		{`{"pk":{"N":"1.50"}}`, `{"pk":{"N":"1.5"}}`},
		{`{"pk":{"S":"a"}}`, `{ "pk" : { "S" : "a" } }`},
	}
	for _, c := range same {
		if a, b := itemKey("t", key(c[0])), itemKey("t", key(c[1])); a == "" || a != b {
			t.Errorf("%s and %s: keys %q and %q, want one", c[0], c[1], a, b)
		}
	}
	different := [][2]string{
		{`{"pk":{"S":"a"}}`, `{"pk":{"S":"b"}}`},
		{`{"pk":{"S":"1"}}`, `{"pk":{"N":"1"}}`},
		{`{"pk":{"S":"a"}}`, `{"sk":{"S":"a"}}`},
		{`{"pk":{"S":"a"},"id":{"N":"1"}}`, `{"pk":{"S":"a"},"id":{"N":"2"}}`},
		{`{"pk":{"S":"a\",\"b"}}`, `{"pk":{"S":"a"},"b":{"S":""}}`},
	}
	for _, c := range different {
		if a, b := itemKey("t", key(c[0])), itemKey("t", key(c[1])); a == b {
			t.Errorf("%s and %s: one key %q", c[0], c[1], a)
		}
	}
	if itemKey("t", key(`{"pk":{"S":"a"}}`)) == itemKey("u", key(`{"pk":{"S":"a"}}`)) {
		t.Error("one key in two tables")
	}
	for _, bad := range []string{`{}`, `{"pk":{"M":{}}}`, `{"pk":{"N":"x"}}`, `{"pk":{"S":"a","N":"1"}}`, `{"pk":null}`} {
		if k := itemKey("t", key(bad)); k != "" {
			t.Errorf("%s: key %q, want none", bad, k)
		}
	}
}

// Any request body parses to its items, or fails, without a panic; the
// key of any item is "" or names its table.
func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{
		`{"TableName":"t","Key":{"pk":{"S":"a"}}}`,
		`{"TableName":"t","Item":{"pk":{"S":"a"},"n":{"N":"1"}}}`,
		`{"TransactItems":[{"Put":{"TableName":"x","Item":{}}},{"ConditionCheck":{"TableName":"y","Key":{"pk":{"N":"2"}}}}]}`,
		`{"TransactItems":[{"Get":{"TableName":"x","Key":{"pk":{"B":"AA=="}}}}]}`,
		`{"TransactItems":[{}]}`, `[]`, `null`, `{`,
	} {
		f.Add("TransactWriteItems", []byte(s))
		f.Add("PutItem", []byte(s))
	}
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		targets, err := parseTargets(op, body)
		if err != nil {
			return
		}
		for _, tg := range targets {
			k := itemKey(tg.TableName, tg.Key)
			if k != "" && !strings.Contains(k, jsonString(tg.TableName)) {
				t.Fatalf("key %q of an item of table %q", k, tg.TableName)
			}
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A transactional read of an item a single write has in flight is
// cancelled; a transaction on it is not (DynamoDB orders the two), and
// neither is a read of another item.
func TestReadOfASingleWriteInFlight(t *testing.T) {
	p, err := Start("http://127.0.0.1:1", 1, Rule{Fault: Conflict}) // nothing listens: a call forwarded fails with 503
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.inFlight.singles[itemKey("t", attributes{"pk": json.RawMessage(`{"S":"a"}`)})] = 1
	call := func(op, body string) (int, string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("X-Amz-Target", target+op)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	status, body := call("TransactGetItems", `{"TransactItems":[{"Get":{"TableName":"t","Key":{"pk":{"S":"b"}}}},{"Get":{"TableName":"t","Key":{"pk":{"S":"a"}}}}]}`)
	var got struct {
		Type    string                  `json:"__type"`
		Reasons []struct{ Code string } `json:"CancellationReasons"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadRequest || !strings.HasSuffix(got.Type, "#TransactionCanceledException") ||
		!cmp.Equal(got.Reasons, []struct{ Code string }{{"None"}, {"TransactionConflict"}}) {
		t.Errorf("TransactGetItems = %d %s, want 400 TransactionCanceledException [None, TransactionConflict]", status, body)
	}
	for _, c := range []struct{ op, body string }{
		{"TransactWriteItems", `{"TransactItems":[{"Update":{"TableName":"t","Key":{"pk":{"S":"a"}}}}]}`},
		{"TransactGetItems", `{"TransactItems":[{"Get":{"TableName":"t","Key":{"pk":{"S":"b"}}}}]}`},
		{"UpdateItem", `{"TableName":"t","Key":{"pk":{"S":"a"}}}`},
	} {
		if status, body := call(c.op, c.body); status != http.StatusServiceUnavailable {
			t.Errorf("%s = %d %s, want it forwarded", c.op, status, body)
		}
	}
	if n := p.Injected()[Conflict]; n != 1 {
		t.Errorf("Injected()[conflict] = %d, want 1", n)
	}
}
