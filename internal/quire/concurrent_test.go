package quire

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestConcurrently(t *testing.T) {
	// Three reads that each wait until all three have started: they can
	// only all return when they run at once.
	var started atomic.Int32
	all := make(chan struct{})
	read := func() error {
		if started.Add(1) == 3 {
			close(all)
		}
		select {
		case <-all:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("ran alone")
		}
	}
	if err := Concurrently(read, read, read); err != nil {
		t.Fatal(err)
	}

	// The error of the first failing function in the order given wins,
	// whichever failed first in time: the second fails only once the third
	// has.
	first, second := errors.New("first"), errors.New("second")
	failed := make(chan struct{})
	err := Concurrently(
		func() error { return nil },
		func() error { <-failed; return first },
		func() error { defer close(failed); return second },
	)
	if err != first {
		t.Errorf("error %v, want %v", err, first)
	}
	if err := Concurrently(); err != nil {
		t.Errorf("no functions: %v", err)
	}
}
