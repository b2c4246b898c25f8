package servicetest

import (
	"strings"
	"testing"
)

// TestLeaks: a password, a token or any email address in the logs is
// found; a line without them is not.
func TestLeaks(t *testing.T) {
	const clean = `{"level":"INFO","msg":"request","route":"POST /login","status":401,"problem":"https://quire.dev/problems/unauthorized"}`
	if found := Leaks([]byte(clean), []string{"quire-customer-password"}); found != nil {
		t.Errorf("a clean line: %v", found)
	}
	for _, leak := range []string{
		`{"msg":"login","password":"quire-customer-password"}`,
		`{"msg":"request","error":"conditional check failed for grace@quire.example"}`,
		`{"msg":"refresh","token":"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl"}`,
	} {
		if found := Leaks([]byte(clean+"\n"+leak), []string{"quire-customer-password", "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl"}); len(found) != 1 {
			t.Errorf("%s: found %v, want one leak", leak, found)
		} else if strings.Contains(found[0], "quire-customer-password") {
			t.Errorf("the report repeats the secret: %s", found[0])
		}
	}
}
