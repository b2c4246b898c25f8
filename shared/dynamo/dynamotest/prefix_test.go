package dynamotest

import (
	"regexp"
	"strings"
	"testing"
)

func TestTablePrefix(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	tests := []struct {
		testName, wantStart string
	}{
		{"TestUsers", "TestUsers-"},
		{"TestUsers/create_then_get", "TestUsers_create_then_get-"},
		{"TestX/é #1", "TestX_____1-"},
		{strings.Repeat("a", 300), strings.Repeat("a", maxTestName) + "-"},
	}
	for _, tt := range tests {
		got := tablePrefix(tt.testName)
		if !strings.HasPrefix(got, tt.wantStart) {
			t.Errorf("tablePrefix(%q) = %q, want it to start with %q", tt.testName, got, tt.wantStart)
		}
		if !valid.MatchString(got) || len(got)+len("some_logical_table") > 255 {
			t.Errorf("tablePrefix(%q) = %q: not a valid table name prefix", tt.testName, got)
		}
		if again := tablePrefix(tt.testName); again == got {
			t.Errorf("tablePrefix(%q) gave %q twice", tt.testName, got)
		}
	}
}
