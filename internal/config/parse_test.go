package config

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/quireapi/quire/internal/quire"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : [1, 2.50, "x"] } `, `[]`, `"s"`, `{"a":1} {}`, "{\"\xff\":1}", `{"a":1e999}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := Parse(body)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("Parse(%q): %v, want EINVALID", body, err)
			}
			return
		}
		js, err := Gunzip(d.Gzip, d.Head)
		if err != nil {
			t.Fatalf("Parse(%q): its gzip does not open: %v", body, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, body); err != nil {
			t.Fatal(err)
		}
		var obj map[string]json.RawMessage
		if !bytes.Equal(js, compact.Bytes()) || json.Unmarshal(js, &obj) != nil || d.Hash != quire.HashBytes(js) || d.Size != len(js) {
			t.Fatalf("Parse(%q) = %q (hash %s, size %d); want the compact object %q", body, js, d.Hash, d.Size, compact.Bytes())
		}
	})
}
