package quiretest

import (
	"errors"
	"testing"

	"github.com/quireapi/quire/internal/quire"
)

// Refused checks err, a decision's answer, against the refusal a case
// expects: with code set, err must be a *quire.Error with that code and
// the client text detail, and Refused reports true (the case is done);
// with none, err must be nil, and it reports false.
func Refused(tb testing.TB, err error, code, detail string) bool {
	tb.Helper()
	if code == "" {
		if err != nil {
			tb.Fatal(err)
		}
		return false
	}
	if e, ok := errors.AsType[*quire.Error](err); !ok || e.Code != code || e.Message != detail {
		tb.Fatalf("= %v, want %s: %q", err, code, detail)
	}
	return true
}
