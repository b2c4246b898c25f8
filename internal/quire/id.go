package quire

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"time"
)

// ID identifies a resource. IDs are positive and at most MaxID, so that every
// JSON client reads them exactly as numbers.
type ID int64

// MaxID is the largest ID: 2^53-1, the largest integer a float64 holds
// exactly; MaxIDLen is its number of digits, the longest an ID is written.
const (
	MaxID    ID = 1<<53 - 1
	MaxIDLen    = 16
)

// idEpoch is the zero of the time part of new IDs.
var idEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// NewID returns a fresh ID without any shared counter: 41 bits of
// milliseconds since 2025 (enough for 69 years) and 12 random bits. IDs
// grow with time, so lists ordered by ID are ordered by creation. Two IDs
// made in the same millisecond collide with probability 1/4096: stores create
// items with a condition that the ID is new and retry with another.
func NewID(now time.Time) ID {
	ms := now.Sub(idEpoch).Milliseconds()
	if ms < 1 {
		ms = 1 // a clock before 2025 still gives positive ids
	}
	var b [2]byte
	rand.Read(b[:]) // never fails
	r := int64(binary.BigEndian.Uint16(b[:]) & 0x0fff)
	return ID((ms<<12 | r) & int64(MaxID))
}

// ParseID parses a path segment as an ID. Only the canonical form counts: a
// positive decimal integer up to MaxID, without sign or leading zeros.
// Anything else is ENOTFOUND, as no resource could have that id.
func ParseID(s string) (ID, error) {
	if s == "" || len(s) > MaxIDLen || s[0] == '0' || !allDigits(s) {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q.", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ID(n) > MaxID {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q.", s)
	}
	return ID(n), nil
}

func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// allDigits reports whether s holds ASCII digits only.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
