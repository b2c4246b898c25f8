// Package idempotency makes POST requests safe to retry: a request with an
// Idempotency-Key runs once, and a retry with the same key and payload gets
// the first answer again, byte for byte.
package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/quireapi/quire/internal/quire"
)

// The two headers a key may come in, with the same meaning.
const (
	Header    = "Idempotency-Key"
	AltHeader = "X-Idempotency-Key"
)

// MaxKeyLen bounds a key, in bytes.
const MaxKeyLen = 255

// Key returns the idempotency key of a request's headers and whether it has
// one. A key is 1 to MaxKeyLen printable ASCII characters; both headers may
// be sent only with the same value. Anything else is EINVALID.
func Key(h http.Header) (string, bool, error) {
	var key string
	for _, name := range []string{Header, AltHeader} {
		vs := h.Values(name)
		switch {
		case len(vs) == 0:
			continue
		case len(vs) > 1:
			return "", false, quire.Errorf(quire.EINVALID, "Send one %s header, not %d.", name, len(vs))
		}
		if err := check(name, vs[0]); err != nil {
			return "", false, err
		}
		if key != "" && key != vs[0] {
			return "", false, quire.Errorf(quire.EINVALID, "The %s and %s headers differ; send one key.", Header, AltHeader)
		}
		key = vs[0]
	}
	return key, key != "", nil
}

func check(name, v string) error {
	if v == "" || len(v) > MaxKeyLen {
		return quire.Errorf(quire.EINVALID, "The %s header must be 1 to %d characters.", name, MaxKeyLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return quire.Errorf(quire.EINVALID, "The %s header must be printable ASCII; byte %d is not.", name, i+1)
		}
	}
	return nil
}

// Fingerprint identifies a request's payload: its method, path (without a
// version prefix), API version and body, the body canonical (insignificant
// whitespace and the order of object members do not count; numbers keep
// their text). A body that is not JSON counts as its bytes.
func Fingerprint(method, path string, version int, body []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), []byte(strconv.Itoa(version)), canonical(body)} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part)))) // no part can run into the next
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func canonical(body []byte) []byte {
	if !json.Valid(body) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	out, err := json.Marshal(v) // sorts object members
	if err != nil {
		return body
	}
	return out
}
