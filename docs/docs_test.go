// Package docs holds Quire's manual, one topic a page, and the tests that
// keep it true.
package docs

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pages returns README.md and every page of docs/, by path from here.
func pages(t *testing.T) []string {
	t.Helper()
	found, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "README.md")}, found...)
}

var (
	// link is an inline Markdown link or image: [text](target).
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// fence opens or closes a code block, whose text holds no links.
	fence   = regexp.MustCompile("^\\s*```")
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// TestLinks: every relative link of README.md and docs/ names a file of the
// repository, and its anchor a heading of that file.
func TestLinks(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		for _, target := range links(t, page) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: the link %s names no file of the repository", page, target)
				continue
			}
			if anchor != "" && !anchors(t, path)[anchor] {
				t.Errorf("%s: the link %s names no heading of %s", page, target, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// TestRepositoryMap: the README's map of the repository names every folder
// at its top (but .git and what .gitignore leaves out), and nothing else.
func TestRepositoryMap(t *testing.T) {
	readme := strings.Join(lines(t, filepath.Join("..", "README.md")), "\n")
	_, list, ok := strings.Cut(readme, "<!-- docs/docs_test.go checks that this list names every folder")
	if !ok {
		t.Fatal("README.md has no map of the repository")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^- `([^`/]+)/`").FindAllStringSubmatch(list, -1) {
		listed[m[1]] = true
	}
	ignored := map[string]bool{".git": true}
	for _, l := range lines(t, filepath.Join("..", ".gitignore")) {
		ignored[strings.Trim(l, "/")] = true
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !ignored[e.Name()] {
			if !listed[e.Name()] {
				t.Errorf("README.md's map of the repository does not name %s/", e.Name())
			}
			delete(listed, e.Name())
		}
	}
	for name := range listed {
		t.Errorf("README.md's map of the repository names %s/, which is not a folder of it", name)
	}
}

// links returns the targets of the links of a Markdown file, outside code.
func links(t *testing.T, path string) []string {
	var out []string
	code := false
	for _, line := range lines(t, path) {
		if fence.MatchString(line) {
			code = !code
			continue
		}
		if code {
			continue
		}
		line = regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "")
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens, and -1, -2...
// after a repeated one.
func anchors(t *testing.T, path string) map[string]bool {
	out := map[string]bool{}
	if !strings.HasSuffix(path, ".md") {
		return out
	}
	code := false
	for _, line := range lines(t, path) {
		if fence.MatchString(line) {
			code = !code
		}
		m := heading.FindStringSubmatch(line)
		if code || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		for n, s := 1, slug; ; n++ {
			if !out[s] {
				out[s] = true
				break
			}
			s = slug + "-" + strconv.Itoa(n)
		}
	}
	return out
}

// TestOpenings: each page of the manual opens, under its title (and the
// comment of a page a command writes), with a paragraph that says who needs
// it: "For ...".
func TestOpenings(t *testing.T) {
	for _, page := range pages(t)[1:] {
		var first string
		for _, l := range lines(t, page)[1:] {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "<!--") {
				first = l
				break
			}
		}
		if !strings.HasPrefix(first, "For ") {
			t.Errorf("%s opens with %q, want a paragraph that says who needs it (\"For ...\")", page, first)
		}
	}
}

func lines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// TestInternalPackages: architecture.md's list of the packages of internal/
// (its bullet "**internal/** is a folder of packages") names every package
// there, by its path under internal/ ("password/argon2id"), and nothing
// else: each code span of the bullet that could be such a path is one.
func TestInternalPackages(t *testing.T) {
	var list []string
	in := false
	for _, line := range lines(t, "architecture.md") {
		switch {
		case strings.HasPrefix(line, "- **internal/** is a folder of packages"):
			in = true
		case in && (line == "" || strings.HasPrefix(line, "- ")):
			in = false
		}
		if in {
			list = append(list, line)
		}
	}
	if list == nil {
		t.Fatal("architecture.md has no list of the packages of internal/")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9/]+)`").FindAllStringSubmatch(strings.Join(list, " "), -1) {
		listed[m[1]] = true
	}
	packages := map[string]bool{}
	root := filepath.Join("..", "internal")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if rel, _ := filepath.Rel(root, filepath.Dir(path)); !strings.Contains(rel, "testdata") {
			packages[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(packages)) {
		if !listed[p] {
			t.Errorf("architecture.md's list of the packages of internal/ does not name %s", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(listed)) {
		if !packages[p] {
			t.Errorf("architecture.md's list of the packages of internal/ names %s, which is no package of internal/", p)
		}
	}
}
