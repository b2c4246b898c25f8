package quiretest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
)

// Tool returns the command that runs tool, a pinned tool of the tests
// ("github.com/oasdiff/oasdiff@v1.37.0"), never linked into a function,
// with args: the binary the Makefile builds for this Go and version under
// the module's root, root/.cache/bin/<Go version>/<name>@<version>, when
// there is one, or else go run.
func Tool(root, tool string, args ...string) *exec.Cmd {
	built := filepath.Join(root, ".cache", "bin", runtime.Version(), path.Base(tool))
	if info, err := os.Stat(built); err == nil && info.Mode().IsRegular() {
		return exec.Command(built, args...)
	}
	return exec.Command("go", append([]string{"run", tool}, args...)...)
}
