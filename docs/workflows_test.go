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
// Connect token it needs, in an environment whose role it assumes; every
// deployment is followed by the smoke suite against its stage; a pull
// request's stage is destroyed whatever happened. actionlint (make lint)
// checks the rest; TestDeployAfterTests holds the gate on the tests.
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
		for name, job := range jobs(text) {
			if strings.Contains(job, "id-token: write") && (!regexp.MustCompile(`(?m)^    environment: \w+$`).MatchString(job) ||
				!strings.Contains(job, "role-to-assume: ${{ vars.AWS_ROLE_ARN }}")) {
				t.Errorf("%s: job %s asks for an OpenID Connect token outside an environment, or assumes a role other than its environment's AWS_ROLE_ARN", f, name)
			}
			var steps []string
			for _, line := range strings.Split(job, "\n") {
				if m := runs.FindStringSubmatch(line); m != nil {
					steps = append(steps, m[1])
				}
			}
			for i, step := range steps {
				if !strings.HasPrefix(step, "make deploy") {
					continue
				}
				want := "make smoke" + regexp.MustCompile(` STAGE=\S+`).FindString(step)
				if i+1 == len(steps) || steps[i+1] != want {
					t.Errorf("%s: job %s runs %q without %q next: each deployment is checked as users see it", f, name, step, want)
				}
			}
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

// jobs returns a workflow's jobs, each its name's line and the lines under
// it.
func jobs(text string) map[string]string {
	_, after, ok := strings.Cut(text, "\njobs:\n")
	if !ok {
		return nil
	}
	out := map[string]string{}
	heads := regexp.MustCompile(`(?m)^  ([\w-]+):\n`).FindAllStringSubmatchIndex(after, -1)
	for i, h := range heads {
		end := len(after)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		out[after[h[2]:h[3]]] = after[h[0]:end]
	}
	return out
}

// TestDeployAfterTests: deploy.yml deploys only a commit the test workflow
// passed: it starts on the test workflow's completed runs of main alone
// (no push, no manual dispatch), its first job goes on only for a run
// that succeeded and was a push to this repository's main (a pull
// request's run, a fork's whose branch is named main included, never
// deploys), every checkout takes the commit that run tested, and
// production comes after development.
func TestDeployAfterTests(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", ".github", "workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	test, deploy := read("test.yml"), read("deploy.yml")
	if !strings.Contains(test, "\nname: test\n") || !strings.Contains(test, "\n  push:\n    branches: [main]\n") {
		t.Error("test.yml is not the workflow test, run on each push to main, which deploy.yml waits for")
	}
	on := regexp.MustCompile(`(?s)\non:\n(.*?)\n\n`).FindStringSubmatch(deploy)
	if want := "  workflow_run:\n    workflows: [test]\n    types: [completed]\n    branches: [main]"; on == nil || on[1] != want {
		t.Errorf("deploy.yml starts on %q, want only the test workflow's completed runs of main:\n%s", on, want)
	}
	all := jobs(deploy)
	for _, cond := range []string{
		"github.event.workflow_run.conclusion == 'success'",
		"github.event.workflow_run.event == 'push'",
		"github.event.workflow_run.head_branch == 'main'",
		"github.event.workflow_run.head_repository.full_name == github.repository",
	} {
		if !strings.Contains(all["development"], "      "+cond) {
			t.Errorf("deploy.yml's development job does not go on only if %s", cond)
		}
	}
	if !strings.Contains(all["production"], "\n    needs: development\n") {
		t.Error("deploy.yml's production job does not need the development job")
	}
	for name, job := range all {
		checkouts := strings.Count(job, "uses: actions/checkout@")
		if refs := strings.Count(job, "\n          ref: ${{ github.event.workflow_run.head_sha }}\n"); checkouts == 0 || refs != checkouts {
			t.Errorf("deploy.yml's job %s: %d checkouts, %d of the commit the tests passed (workflow_run.head_sha)", name, checkouts, refs)
		}
	}
}
