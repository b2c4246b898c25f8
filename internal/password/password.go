// Package password says what Quire accepts as a password (Check). Hashing
// one is a Hasher's work, Argon2id's in package argon2id: apart from this
// package, so that the stores and functions that only check a password's
// shape, or none, link no hashing.
package password

import (
	"fmt"
	"unicode/utf8"
)

// Length bounds of a password, in characters. The upper bound keeps the
// work of hashing bounded; it is well above what NIST SP 800-63B asks.
const (
	MinLength = 8
	MaxLength = 128
)

// Check returns why pw is not an acceptable password, or "".
func Check(pw string) string {
	n := utf8.RuneCountInString(pw)
	switch {
	case !utf8.ValidString(pw):
		return "must be UTF-8"
	case n < MinLength:
		return fmt.Sprintf("must be at least %d characters", MinLength)
	case n > MaxLength:
		return fmt.Sprintf("must be at most %d characters", MaxLength)
	}
	return ""
}

// CheckGuess returns why pw cannot be a password given to prove who one
// is (at login, or as the current password), or "": it is longer than
// any password.
func CheckGuess(pw string) string {
	if utf8.RuneCountInString(pw) > MaxLength {
		return fmt.Sprintf("must be at most %d characters", MaxLength)
	}
	return ""
}

// Hasher makes and checks password hashes.
type Hasher interface {
	// Hash returns the hash of pw, under a new random salt.
	Hash(pw string) string
	// Match reports whether pw matches hash. An empty hash (no such
	// user) costs the same work as a real one and never matches.
	Match(hash, pw string) bool
}
