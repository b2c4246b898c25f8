package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/quire"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers [][2]string
		key     string
		ok      bool
		invalid bool
	}{
		{"none", nil, "", false, false},
		{"Idempotency-Key", [][2]string{{KeyHeader, "abc-123"}}, "abc-123", true, false},
		{"X-Idempotency-Key", [][2]string{{AltKeyHeader, "abc-123"}}, "abc-123", true, false},
		{"both, equal", [][2]string{{KeyHeader, "k"}, {AltKeyHeader, "k"}}, "k", true, false},
		{"both, different", [][2]string{{KeyHeader, "k"}, {AltKeyHeader, "j"}}, "", false, true},
		{"twice", [][2]string{{KeyHeader, "k"}, {KeyHeader, "k"}}, "", false, true},
		{"empty", [][2]string{{KeyHeader, ""}}, "", false, true},
		{"255 bytes", [][2]string{{KeyHeader, strings.Repeat("k", 255)}}, strings.Repeat("k", 255), true, false},
		{"256 bytes", [][2]string{{KeyHeader, strings.Repeat("k", 256)}}, "", false, true},
		{"inner space", [][2]string{{KeyHeader, "a b"}}, "a b", true, false},
		{"tab", [][2]string{{KeyHeader, "a\tb"}}, "", false, true},
		{"not ASCII", [][2]string{{KeyHeader, "clé"}}, "", false, true},
		{"DEL", [][2]string{{KeyHeader, "a\x7f"}}, "", false, true},
	} {
		h := http.Header{}
		for _, kv := range tc.headers {
			h.Add(kv[0], kv[1])
		}
		key, ok, err := IdempotencyKey(h)
		if key != tc.key || ok != tc.ok || (err != nil) != tc.invalid || (err != nil && quire.ErrorCode(err) != quire.EINVALID) {
			t.Errorf("%s: Key = %q, %v, %v", tc.name, key, ok, err)
		}
	}
}

func FuzzKey(f *testing.F) {
	f.Add("abc", "")
	f.Add("abc", "abd")
	f.Add("", "\x00")
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{}
		if a != "" {
			h.Set(KeyHeader, a)
		}
		if b != "" {
			h.Set(AltKeyHeader, b)
		}
		key, ok, err := IdempotencyKey(h)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID || ok || key != "" {
				t.Fatalf("Key(%q, %q) = %q, %v, %v", a, b, key, ok, err)
			}
			return
		}
		if ok != (key != "") || len(key) > MaxKeyLen || (key != a && key != b) {
			t.Fatalf("Key(%q, %q) = %q, %v", a, b, key, ok)
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("Key(%q, %q) accepted %q", a, b, key)
			}
		}
	})
}
