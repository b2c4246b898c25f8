package idempotency

import (
	"testing"
)

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
