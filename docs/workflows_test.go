package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	uses   = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)(.*)$`)
	pinned = regexp.MustCompile(`^[\w.-]+/[\w.-]+@[0-9a-f]{40}$`)
	runs   = regexp.MustCompile(`^\s*(?:-\s+)?run:\s*(.*)$`)
)

// TestWorkflows: the pipeline's workflows pin every action by its full
// commit SHA, with its version in a comment; their shell steps only call
// what a developer calls (make targets and .ci/run); and each starts with
// read-only permissions, which only a deploying job widens, to the OpenID
// Connect token it needs; a pull request's stage is destroyed whatever
// happened. actionlint (make lint) checks the rest.
func TestWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", ".github", "workflows", "*.yml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows %v (%v), want the tests' and the deployment's", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(f, "preview.yml") && !strings.Contains(text, "      - if: always()\n        run: make destroy\n") {
			t.Errorf("%s: the pull request's stage is not destroyed whatever happened (a last step if: always(), run: make destroy)", f)
		}
		if !strings.Contains(text, "\npermissions:\n  contents: read\n") {
			t.Errorf("%s: the workflow's permissions are not read-only contents", f)
		}
		for i, line := range strings.Split(text, "\n") {
			if m := uses.FindStringSubmatch(line); m != nil {
				if !pinned.MatchString(m[1]) || !regexp.MustCompile(`^ # v\d+\.\d+\.\d+$`).MatchString(m[2]) {
					t.Errorf("%s:%d: %s is not pinned by a full commit SHA with its version in a comment", f, i+1, strings.TrimSpace(line))
				}
			}
			if m := runs.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "make ") && m[1] != ".ci/run" {
				t.Errorf("%s:%d: a step runs %q: steps call make targets, as a developer does", f, i+1, m[1])
			}
			if strings.Contains(line, "id-token: write") && !strings.HasSuffix(f, "deploy.yml") && !strings.HasSuffix(f, "preview.yml") {
				t.Errorf("%s:%d: only the deployments ask for an OpenID Connect token", f, i+1)
			}
			if strings.Contains(line, "secrets.") {
				t.Errorf("%s:%d: the workflows use no secret: AWS trusts GitHub's OpenID Connect token", f, i+1)
			}
		}
	}
}
