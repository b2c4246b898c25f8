package idempotency

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
		{"Idempotency-Key", [][2]string{{Header, "abc-123"}}, "abc-123", true, false},
		{"X-Idempotency-Key", [][2]string{{AltHeader, "abc-123"}}, "abc-123", true, false},
		{"both, equal", [][2]string{{Header, "k"}, {AltHeader, "k"}}, "k", true, false},
		{"both, different", [][2]string{{Header, "k"}, {AltHeader, "j"}}, "", false, true},
		{"twice", [][2]string{{Header, "k"}, {Header, "k"}}, "", false, true},
		{"empty", [][2]string{{Header, ""}}, "", false, true},
		{"255 bytes", [][2]string{{Header, strings.Repeat("k", 255)}}, strings.Repeat("k", 255), true, false},
		{"256 bytes", [][2]string{{Header, strings.Repeat("k", 256)}}, "", false, true},
		{"inner space", [][2]string{{Header, "a b"}}, "a b", true, false},
		{"tab", [][2]string{{Header, "a\tb"}}, "", false, true},
		{"not ASCII", [][2]string{{Header, "clé"}}, "", false, true},
		{"DEL", [][2]string{{Header, "a\x7f"}}, "", false, true},
	} {
		h := http.Header{}
		for _, kv := range tc.headers {
			h.Add(kv[0], kv[1])
		}
		key, ok, err := Key(h)
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
			h.Set(Header, a)
		}
		if b != "" {
			h.Set(AltHeader, b)
		}
		key, ok, err := Key(h)
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

func TestFingerprint(t *testing.T) {
	fp := func(method, path string, v int, body string) string {
		return Fingerprint(method, path, v, []byte(body))
	}
	base := fp("POST", "/pay", 1, `{"a":1,"b":[1,2]}`)
	for name, same := range map[string]string{
		"whitespace":   fp("POST", "/pay", 1, " {\n\"a\" : 1 , \"b\":[1, 2]}\n"),
		"member order": fp("POST", "/pay", 1, `{"b":[1,2],"a":1}`),
	} {
		if same != base {
			t.Errorf("%s changes the fingerprint", name)
		}
	}
	for name, other := range map[string]string{
		"method":      fp("PUT", "/pay", 1, `{"a":1,"b":[1,2]}`),
		"path":        fp("POST", "/cart", 1, `{"a":1,"b":[1,2]}`),
		"version":     fp("POST", "/pay", 2, `{"a":1,"b":[1,2]}`),
		"value":       fp("POST", "/pay", 1, `{"a":2,"b":[1,2]}`),
		"number text": fp("POST", "/pay", 1, `{"a":1.0,"b":[1,2]}`),
		"array order": fp("POST", "/pay", 1, `{"a":1,"b":[2,1]}`),
		"not JSON":    fp("POST", "/pay", 1, `{"a":1,"b":[1,2]`),
		"empty":       fp("POST", "/pay", 1, ``),
	} {
		if other == base {
			t.Errorf("a different %s keeps the fingerprint", name)
		}
	}
	// A separator in a field cannot make two requests alike.
	if fp("POST", "/a\x00b", 1, "") == fp("POST\x00/a", "b", 1, "") {
		t.Error("fields run into each other")
	}
}

func FuzzFingerprint(f *testing.F) {
	f.Add([]byte(`{"amount": 25.00}`))
	f.Add([]byte(`[1, {"b":2,"a":1}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := Fingerprint("POST", "/x", 1, body)
		if b := Fingerprint("POST", "/x", 1, canonical(body)); a != b {
			t.Fatalf("the canonical form of %q fingerprints differently", body)
		}
	})
}
