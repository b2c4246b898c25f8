package quire

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestCheckText: letters, marks, symbols and spaces of any script are
// text; what is not shown as itself is not, on one line or several (where
// a line feed ends a line).
func TestCheckText(t *testing.T) {
	type result struct{ OneLine, Lines string }
	no := func(r rune) string {
		return fmt.Sprintf("must not contain %U, a control, format or invisible character", r)
	}
	never := func(r rune) result { return result{no(r), no(r)} }
	for _, tc := range []struct {
		in   string
		want result
	}{
		{"Ada", result{}},
		{"Zoë Ørsted", result{}},
		{"  Ada  ", result{}},
		{"محمد", result{}},
		{"李白", result{}},
		{"नमस्ते", result{}},             // a virama and vowel signs
		{"\u2764\ufe0f books", result{}}, // an emoji with its variation selector
		{"a\u00a0b", result{}},           // a no-break space
		{"\u2028Ada\u2029\n", result{}},  // separators around the text are trimmed
		{"", result{}},
		{"0123456789", result{}},
		{"01234567890", result{"must be at most 10 characters", "must be at most 10 characters"}},
		{"a\xffb", result{"must be UTF-8", "must be UTF-8"}},
		{"one\ntwo", result{no('\n'), ""}},
		{"one\r\ntwo", never('\r')},
		{"a\tb", never('\t')},
		{"a\x00b", never(0)},
		{"a\u0085b", never(0x85)},         // next line
		{"a\u202egpj.exe", never(0x202e)}, // right-to-left override
		{"a\u2066b\u2069", never(0x2066)}, // left-to-right isolate
		{"ad\u200bmin", never(0x200b)},    // zero width space
		{"a\u200db", never(0x200d)},       // zero width joiner
		{"a\u00adb", never(0xad)},         // soft hyphen
		{"\ufeffAda", never(0xfeff)},      // byte order mark
		{"a\u2028b", never(0x2028)},       // line separator
		{"a\u2029b", never(0x2029)},       // paragraph separator
		{"\u3164", never(0x3164)},         // Hangul filler, shown as nothing
		{"a\ufffeb", never(0xfffe)},       // a noncharacter
	} {
		got := result{CheckText(tc.in, 10, false), CheckText(tc.in, 10, true)}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("CheckText(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for in, want := range map[string]string{"": "must not be empty", " \n ": "must not be empty", "Ada": "", "a\nb": no('\n')} {
		if got := CheckName(in, 10); got != want {
			t.Errorf("CheckName(%q) = %q, want %q", in, got, want)
		}
	}
}

// trojans are characters that reorder or hide text as it is shown (CVE-2021-42574's
// bidirectional controls, invisible spaces and joiners), listed apart from the
// categories CheckText refuses.
var trojans = []rune{
	0x061c, 0x115f, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
	0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029, 0x3164, 0xfeff, 0xffa0,
}

// FuzzCheckText: text CheckText takes is valid UTF-8 of at most max
// characters once trimmed, with no character of the categories Cc, Cf,
// Zl and Zp (but line feeds in lines), nor one of trojans; and text of
// letters (but the invisible Hangul fillers) and spaces alone is taken.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"Ada", " Zoë\n", "evil\u202egpj", "a\u200bb", "\ufeff", "one\ntwo", "a\xff", "\u2764\ufe0f"} {
		f.Add(s, 10, false)
		f.Add(s, 10, true)
	}
	f.Fuzz(func(t *testing.T, s string, max int, lines bool) {
		if CheckText(s, max, lines) != "" {
			if plain := strings.Map(func(r rune) rune {
				if unicode.IsLetter(r) && !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || r == ' ' {
					return r
				}
				return -1
			}, s); utf8.RuneCountInString(plain) <= max && CheckText(plain, max, lines) != "" {
				t.Fatalf("CheckText(%q, %d) refuses letters and spaces", plain, max)
			}
			return
		}
		text := strings.TrimSpace(s)
		if !utf8.ValidString(text) || utf8.RuneCountInString(text) > max {
			t.Fatalf("CheckText(%q, %d) takes text that is not UTF-8 or longer", s, max)
		}
		for _, r := range text {
			if lines && r == '\n' {
				continue
			}
			if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) || strings.ContainsRune(string(trojans), r) {
				t.Fatalf("CheckText(%q, %d, %v) takes %U", s, max, lines, r)
			}
		}
	})
}

// TextPattern says what CheckText and CheckName say, for every code point
// of the Basic Multilingual Plane, as the one character of a name, and
// between two letters of a text of one line or of several; beyond it, at
// each edge of the ranges the rules name, it takes every character, which
// the server refuses or not (BeyondThePlane).
func TestTextPattern(t *testing.T) {
	oneLine, lines, name := regexp.MustCompile(TextPattern(false, false)), regexp.MustCompile(TextPattern(true, false)),
		regexp.MustCompile(TextPattern(false, true))
	var runes []rune
	for r := rune(0); r <= 0xffff; r++ {
		runes = append(runes, r)
	}
	for _, tab := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.White_Space,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point} {
		for _, rg := range tab.R32 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				runes = append(runes, r-1, r, r+1)
			}
		}
	}
	runes = append(runes, unicode.MaxRune)
	for _, r := range runes {
		if r >= 0xd800 && r <= 0xdfff { // surrogates: no UTF-8 holds them
			continue
		}
		in := "a" + string(r) + "b"
		beyond := r > 0xffff
		for _, c := range []struct {
			re   *regexp.Regexp
			s    string
			want bool
		}{
			{oneLine, in, beyond || CheckText(in, 3, false) == ""},
			{lines, in, beyond || CheckText(in, 3, true) == ""},
			{name, string(r), beyond || CheckName(string(r), 1) == ""},
		} {
			if c.re.MatchString(c.s) != c.want {
				t.Fatalf("%U in %+q: the pattern %v matches %v, the check says %v", r, c.s, c.re, !c.want, c.want)
			}
		}
	}
	if name.MatchString(" \u3000\t") || !name.MatchString(" a ") {
		t.Errorf("a name pattern that takes white space alone, or not a letter between spaces")
	}
}
