// Package walk records, in an instrumented copy of Quire's tree, each
// entry into a project function: the file it is in, and the project file
// that called it. It is written into the copy by docs' TestWalks, never
// part of Quire.
package walk

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Entry is one call into a project function: its file, the project file of
// its caller ("" for none: the test that sent the event), the goroutine it
// ran in and, for the first call of a goroutine without a project caller,
// the goroutine that started it.
type Entry struct {
	File, Caller      string
	Goroutine, Parent int
}

var (
	mu      sync.Mutex
	on      bool
	entries []Entry
)

// Start starts recording, afresh.
func Start() { mu.Lock(); on, entries = true, nil; mu.Unlock() }

// Stop stops recording and returns what it recorded, in order.
func Stop() []Entry { mu.Lock(); defer mu.Unlock(); on = false; return entries }

// Enter records a call into a function of file.
func Enter(file string) {
	mu.Lock()
	recording := on
	mu.Unlock()
	if !recording || testSupport(file) {
		return
	}
	e := caller()
	e.File = file
	mu.Lock()
	if on {
		entries = append(entries, e)
	}
	mu.Unlock()
}

// caller returns the Entry of a call, but for its file: the project file
// of the nearest project function below the one that called Enter, or, in
// a goroutine with none, the file of the project function that started the
// goroutine, and the goroutines.
func caller() Entry {
	buf := make([]byte, 1<<16)
	stack := string(buf[:runtime.Stack(buf, false)])
	var e Entry
	fmt.Sscanf(stack, "goroutine %d ", &e.Goroutine)
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	seen := 0 // project frames: the callee first
	for {
		f, more := frames.Next()
		if file, ok := project(f.File); ok {
			if seen++; seen == 2 {
				e.Caller = file
				return e
			}
		}
		if !more {
			break
		}
	}
	if _, created, ok := strings.Cut(stack, "\ncreated by "); ok {
		lines := strings.SplitN(created, "\n", 3)
		if i := strings.LastIndex(lines[0], " in goroutine "); i >= 0 {
			fmt.Sscanf(lines[0][i:], " in goroutine %d", &e.Parent)
		}
		if len(lines) > 1 {
			path, _, _ := strings.Cut(strings.TrimSpace(lines[1]), ":")
			if file, ok := project(path); ok {
				e.Caller = file
			}
		}
	}
	return e
}

// testSupport reports whether rel is a file the deployed functions do not
// run: the tests' packages (internal/testing, servicetest's log sink among
// them), and the
// check of each DynamoDB call against the function's grants, which stands
// in for IAM outside AWS (dynamo/iam.go).
func testSupport(rel string) bool {
	if rel == "internal/dynamo/iam.go" {
		return true
	}
	for _, dir := range strings.Split(rel, "/") {
		if dir == "testing" || strings.HasSuffix(dir, "test") {
			return true
		}
	}
	return false
}

// project returns path relative to the tree's root when it names a project
// file (under internal/ or functions/, not a test's, not this package's): the
// module's path ends in quire, and so does the copy's folder.
func project(path string) (string, bool) {
	for _, root := range []string{"quire/internal/", "quire/functions/"} {
		if i := strings.LastIndex(path, root); i >= 0 {
			rel := path[i+len("quire/"):]
			if strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "internal/walk/") || testSupport(rel) {
				return "", false
			}
			return rel, true
		}
	}
	return "", false
}
