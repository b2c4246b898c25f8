package dynamotest

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Two test binaries at once hold two endpoints, never one; an endpoint let
// go is the next one taken.
func TestTake(t *testing.T) {
	// Ports of this test alone, so that a test binary holding a pool's
	// endpoint does not make this one wait.
	port := 40000 + rand.IntN(20000)
	endpoints := []string{fmt.Sprintf("http://127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", port+1)}
	first, releaseFirst, err := take(endpoints)
	if err != nil {
		t.Fatal(err)
	}
	second, releaseSecond, err := take(endpoints)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseSecond()
	if first == second {
		t.Fatalf("two holders of %s", first)
	}
	releaseFirst()
	third, releaseThird, err := take(endpoints)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseThird()
	if third != first {
		t.Errorf("took %s, want %s, the one let go", third, first)
	}
	if ep, release, err := take([]string{"http://127.0.0.1:1"}); err != nil || ep != "http://127.0.0.1:1" {
		t.Errorf("take of one endpoint = %s, %v; want it, shared", ep, err)
	} else {
		release()
	}
	if _, _, err := take([]string{"localhost:8000", endpoints[0]}); err == nil {
		t.Error("took from a list with a malformed URL")
	}
}
