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
// (surrounding space aside): it is empty, or not valid text on one line
// (see CheckText); or "".
func CheckName(s string, max int) string {
	if strings.TrimSpace(s) == "" {
		return "must not be empty"
	}
	return CheckText(s, max, false)
}

// CheckText returns why s, text that people read (a name, a bio, an email
// address), is not valid once its surrounding space is trimmed, as it is
// stored: it is not UTF-8, is longer than max characters, or holds a
// character that is not shown as itself (see hidden); or "". With lines,
// the text may be of several lines, each ended by a line feed (U+000A).
//
// The model is PRECIS's FreeformClass (RFC 8264): letters, digits, marks,
// punctuation, symbols and spaces are text. Controls, formatting
// characters (the right-to-left override U+202E, the zero width space
// U+200B, the byte order mark U+FEFF, joiners U+200C and U+200D) and
// characters that are invisible by default (Hangul fillers) are not: they
// let one name display as another, or turn the text around it. So emoji
// joined by U+200D, or a flag of tag characters, are not taken.
func CheckText(s string, max int, lines bool) string {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return "must be UTF-8"
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	}
	for _, r := range s {
		if hidden(r) && !(lines && r == '\n') {
			return fmt.Sprintf("must not contain %U, a control, format or invisible character", r)
		}
	}
	return ""
}

// hidden reports whether r is not shown as itself: a control (Unicode's
// category Cc) or format character (Cf), a line or paragraph separator (Zl,
// Zp), a default ignorable code point (shown as nothing) or a
// noncharacter.
func hidden(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point)
}
