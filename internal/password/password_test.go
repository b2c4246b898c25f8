package password

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		pw string
		ok bool
	}{
		{"", false},
		{"1234567", false},
		{"12345678", true},
		{"ééééééé", false}, // 7 characters, 14 bytes
		{"éééééééé", true}, // 8 characters
		{strings.Repeat("a", MaxLength), true},
		{strings.Repeat("a", MaxLength+1), false},
		{strings.Repeat("é", MaxLength), true}, // 256 bytes
		{"abcdefg\xff", false},
	} {
		if got := Check(c.pw); (got == "") != c.ok {
			t.Errorf("Check(%q) = %q, want ok %v", c.pw, got, c.ok)
		}
	}
}
