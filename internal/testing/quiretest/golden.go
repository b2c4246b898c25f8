package quiretest

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files (and the contracts) from what the code makes")

// Updating reports whether the tests run with -update, which rewrites what
// they compare with from what the code makes.
func Updating() bool { return *update }

// Golden fails tb unless got is what the golden file path holds; with the
// -update flag it first writes got there. A golden file holds what a
// reviewer should see change (a synthesized template): a change the code
// means is rewritten with -update, and shows in review as the file's diff.
func Golden(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test -run Golden -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s differs (-want +got); if the change is meant, rewrite it with go test -run Golden -update:\n%s", path, diff)
	}
}
