package quire

import "sync"

// Concurrently runs every f at once, each in its own goroutine but the
// first, and returns once all have returned: the error of the first f (in
// the order given) that failed, or nil. It is how a handler overlaps reads
// that do not depend on each other, so that they cost one round trip.
func Concurrently(fs ...func() error) error {
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i := 1; i < len(fs); i++ {
		wg.Go(func() { errs[i] = fs[i]() })
	}
	if len(fs) > 0 {
		errs[0] = fs[0]()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
