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
	"strconv"
)

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
