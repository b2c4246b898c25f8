package docs

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/shared/login"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
)

// read returns the page's text.
func read(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPublicRoutes: the list of public routes in authentication.md is
// the route table's, a version's prefix written /api/v<N>.
func TestPublicRoutes(t *testing.T) {
	page := read(t, "authentication.md")
	_, list, ok := strings.Cut(page, "- **Public routes**")
	if !ok {
		t.Fatal("authentication.md has no list of public routes")
	}
	list, _, _ = strings.Cut(list, "Every other route")
	var listed, public []string
	for _, m := range regexp.MustCompile("`((?:GET|POST|PUT|DELETE) /[^`]*)`").FindAllStringSubmatch(list, -1) {
		listed = append(listed, m[1])
	}
	prefix := regexp.MustCompile(`^/api/v\d+`)
	for _, r := range routes.All() {
		if r.Access == routes.Public {
			public = append(public, r.Method+" "+prefix.ReplaceAllString(r.Path, "/api/v<N>"))
		}
	}
	slices.Sort(listed)
	slices.Sort(public)
	if listed, public = slices.Compact(listed), slices.Compact(public); !slices.Equal(listed, public) {
		t.Errorf("authentication.md lists the public routes\n%v\nthe route table has\n%v", listed, public)
	}
}

// TestTokenLifetimes: the login answer authentication.md shows carries the
// default lifetimes: expires_in the access token's, refresh_expires_in the
// session's, in whole seconds left, less the second already begun.
func TestTokenLifetimes(t *testing.T) {
	page := read(t, "authentication.md")
	for field, want := range map[string]time.Duration{
		"expires_in":         login.DefaultLifetime,
		"refresh_expires_in": login.RefreshIdle - time.Second,
	} {
		m := regexp.MustCompile(`"` + field + `": (\d+)`).FindStringSubmatch(page)
		if m == nil {
			t.Errorf("authentication.md shows no %s", field)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != int(want.Seconds()) {
			t.Errorf("authentication.md shows %s %d, the server sends %d", field, got, int(want.Seconds()))
		}
	}
}

// TestExposedHeaders: conventions.md names the headers a page may read,
// rest.CORSExposeHeaders, as the server sends them.
func TestExposedHeaders(t *testing.T) {
	want := "Access-Control-Expose-Headers: " + strings.Join(rest.CORSExposeHeaders, ", ")
	if !strings.Contains(read(t, "conventions.md"), "`"+want+"`") {
		t.Errorf("conventions.md does not say `%s`", want)
	}
}
