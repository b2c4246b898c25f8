// Package generated writes the pages of docs/ that a command measures
// (docs/bench.md by `make bench`, docs/soak.md by `make soak`): each under
// a heading that names the command, the machine and the date, so that no
// figure of the manual is typed by hand.
package generated

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Machine describes this computer: its processor, cores, OS and
// architecture, and the Go that built the program.
func Machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				cpu = strings.TrimSpace(value)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s/%s, %s", cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// Write writes the page at path: title, the line that says who needs it
// (who, "For ..."), the line that says which command wrote it where and
// when, and what body writes, which also goes to stdout as it is written. The page is replaced, in one rename, only when
// body returns nil, so that a failed run leaves the last good page.
func Write(path, title, who, command string, body func(w io.Writer) error) error {
	var page bytes.Buffer
	fmt.Fprintf(&page, "# %s\n\n", title)
	fmt.Fprintf(&page, "<!-- Written by `%s`: run it again rather than editing this page. -->\n\n", command)
	fmt.Fprintf(&page, "%s\n\n", who)
	fmt.Fprintf(&page, "Written by `%s` on %s, %s.\n\n", command, Machine(), time.Now().UTC().Format("2006-01-02"))
	os.Stdout.Write(page.Bytes())
	if err := body(io.MultiWriter(os.Stdout, &page)); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".generated-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(page.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
