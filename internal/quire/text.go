package quire

import (
	"cmp"
	"fmt"
	"slices"
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

// TextPattern is CheckText's rule on the characters of the Basic
// Multilingual Plane as a regular expression that ECMA-262 without flags,
// RE2 and Python read alike: a class of the characters hidden refuses,
// each written as itself, so that no escape differs between them. ECMA-262
// without the u flag reads a string as UTF-16 code units, in which a
// character beyond U+FFFF is two, and a class cannot name it: those hidden
// refuses beyond the plane (tag characters, U+E0001 to U+E007F, and a few
// others) are the server's to refuse alone, which the documents say in
// words (BeyondThePlane). With lines, line feeds are text; with name, the
// text holds a character that is not white space too, as CheckName asks.
func TextPattern(lines, name bool) string {
	hidden := HiddenClass(lines)
	if !name {
		return "^[^" + hidden + "]*$"
	}
	return "^[^" + hidden + "]*[^" + hidden + class(appendRanges(nil, unicode.White_Space)) + "][^" + hidden + "]*$"
}

// BeyondThePlane says in words which characters hidden refuses that
// TextPattern and HiddenClass cannot name.
const BeyondThePlane = "beyond U+FFFF, which no pattern names, the tag characters U+E0001 to U+E007F and the other " +
	"format, invisible and noncharacter code points are refused too"

// HiddenClass is the inside of a character class of the characters of the
// Basic Multilingual Plane hidden refuses, each written as itself (see
// TextPattern); with lines, less the line feed.
func HiddenClass(lines bool) string {
	var hide []rune // inclusive ranges, in pairs
	for _, t := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point} {
		hide = appendRanges(hide, t)
	}
	if lines {
		hide = appendExcept(nil, hide, '\n')
	}
	bmp := hide[:0]
	for i := 0; i < len(hide); i += 2 {
		if hide[i] <= 0xffff {
			bmp = append(bmp, hide[i], min(hide[i+1], 0xffff))
		}
	}
	return class(bmp)
}

// appendRanges appends the ranges of t to rs, as pairs of their first and
// last runes (every stride of t's ranges taken one rune at a time).
func appendRanges(rs []rune, t *unicode.RangeTable) []rune {
	add := func(lo, hi, stride rune) {
		for r := lo; r <= hi; r += stride {
			if stride == 1 {
				rs = append(rs, r, hi)
				return
			}
			rs = append(rs, r, r)
		}
	}
	for _, r := range t.R16 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return rs
}

// appendExcept appends the ranges of rs to out, less the rune x.
func appendExcept(out, rs []rune, x rune) []rune {
	for i := 0; i < len(rs); i += 2 {
		lo, hi := rs[i], rs[i+1]
		if x < lo || x > hi {
			out = append(out, lo, hi)
			continue
		}
		if lo < x {
			out = append(out, lo, x-1)
		}
		if x < hi {
			out = append(out, x+1, hi)
		}
	}
	return out
}

// class writes ranges, in pairs, as the inside of a character class, in
// order, those that touch joined.
func class(rs []rune) string {
	pairs := make([][2]rune, 0, len(rs)/2)
	for i := 0; i < len(rs); i += 2 {
		pairs = append(pairs, [2]rune{rs[i], rs[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]rune) int { return cmp.Compare(a[0], b[0]) })
	rs = rs[:0:0]
	for _, p := range pairs {
		if n := len(rs); n > 0 && p[0] <= rs[n-1]+1 {
			rs[n-1] = max(rs[n-1], p[1])
			continue
		}
		rs = append(rs, p[0], p[1])
	}
	var b strings.Builder
	for i := 0; i < len(rs); i += 2 {
		b.WriteRune(rs[i])
		if rs[i+1] != rs[i] {
			b.WriteByte('-')
			b.WriteRune(rs[i+1])
		}
	}
	return b.String()
}
