package quire

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// HashLen is the length of a content hash: 128 bits of SHA-256 in
// unpadded base64url.
const HashLen = 22

// HashBytes returns the content hash of b.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// ContentHash returns the content hash of v: the hash of its JSON encoding,
// which is the same for equal values (struct fields in order, map keys
// sorted). Every stored resource carries the hash of its content, and its
// ETag is made from it. It panics when v cannot be marshalled, which is a
// bug: it is only called on Quire's own domain values.
func ContentHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("quire: content hash of %T: %v", v, err))
	}
	return HashBytes(b)
}

// WriteTime is the updated_at of a write at now over a resource last
// written at prev: now to the millisecond, in UTC, and always after prev.
func WriteTime(now, prev time.Time) time.Time {
	t := now.UTC().Truncate(time.Millisecond)
	if !t.After(prev) {
		t = prev.Add(time.Millisecond)
	}
	return t
}

// Precondition is what a conditional write requires of the stored state of
// its resource, from the request's If-Match and If-None-Match headers. The
// zero Precondition requires nothing.
type Precondition struct {
	// Match lists the content hashes the stored resource may have
	// (If-Match with entity tags); empty requires none.
	Match []string
	// Exists requires that the resource exists (If-Match: *).
	Exists bool
	// Absent requires that it does not (If-None-Match: *): a create-only
	// write.
	Absent bool
	// NoneOf lists content hashes the resource must not have
	// (If-None-Match with entity tags).
	NoneOf []string
}

// Check returns an EPRECONDITION error when a resource whose stored content
// hash is hash ("" when it does not exist) fails p, and nil otherwise.
func (p Precondition) Check(hash string) error {
	exists := hash != ""
	switch {
	case p.Absent && exists:
		return Errorf(EPRECONDITION, "The resource exists already, and If-None-Match: * asked to create it only.")
	case p.Exists && !exists:
		return Errorf(EPRECONDITION, "The resource does not exist, and If-Match: * asked for one that does.")
	case len(p.Match) > 0 && (!exists || !slices.Contains(p.Match, hash)):
		return Errorf(EPRECONDITION, "The resource changed since the ETag in If-Match was sent; nothing was changed. GET it again and retry.")
	case exists && slices.Contains(p.NoneOf, hash):
		return Errorf(EPRECONDITION, "The resource has an ETag listed in If-None-Match; nothing was changed.")
	}
	return nil
}
