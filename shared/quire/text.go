package quire

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEmailLen bounds an email address, in bytes: RFC 5321's limit on a
// forward path. No stored email is longer, so a longer one names no account.
const MaxEmailLen = 254

// CheckName returns why s is not a valid name of at most max characters
// (surrounding space aside), or "".
func CheckName(s string, max int) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "must not be empty"
	case !utf8.ValidString(s):
		return "must be UTF-8"
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	case strings.ContainsFunc(s, unicode.IsControl):
		return "must not contain control characters"
	}
	return ""
}
