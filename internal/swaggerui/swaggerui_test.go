package swaggerui_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"html"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/swaggerui"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// TestRoot: a person who opens the API's address (the one `make run`
// prints, or a stage's, with or without a base path) is sent to the docs
// page, without a token, by a path that names no host (a Host header's
// would be cached with the answer).
func TestRoot(t *testing.T) {
	for _, base := range []string{"", "/shop"} {
		api := servicetest.New(t, servicetest.Option{BasePath: base})
		for _, path := range []string{"/", ""} {
			r := api.Do(t, "GET", path, "")
			if r.StatusCode != 302 || r.Header.Get("Location") != base+"/docs" || r.Body != "" {
				t.Errorf("GET %q under %q = %d, Location %q, body %q; want 302 to %s/docs", path, base, r.StatusCode, r.Header.Get("Location"), r.Body, base)
			}
		}
	}
}

// TestPage: GET /docs is public, an HTML page under a Content-Security-
// Policy that allows only the API's own files, each of which it names is
// served, and a revalidation is 304.
func TestPage(t *testing.T) {
	built(t)
	api := servicetest.New(t)
	r := api.Do(t, "GET", "/docs", "")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs = %d %s: %.200s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	if got := r.Header.Get("Content-Security-Policy"); got != swaggerui.Policy || !strings.Contains(got, "script-src 'self';") {
		t.Errorf("Content-Security-Policy %q", got)
	}
	if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("headers %v", r.Header)
	}
	// Every file the page names is relative (the stage's paths start with
	// /prod) and served: its icon at the API's root, where browsers look
	// for one, the others under docs/.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(r.Body, -1)
	if len(refs) != 5 {
		t.Errorf("the page names %d files, want its icon, Swagger UI's scripts (the bundle and the preset of its version selector) and style sheet and Quire's script: %v", len(refs), refs)
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref[1], "docs/") && ref[1] != "favicon.ico" {
			t.Errorf("the page names %q, want a path relative to the page", ref[1])
			continue
		}
		f := api.Do(t, "GET", "/"+ref[1], "", "Accept-Encoding", "gzip")
		if f.StatusCode != 200 || len(f.Body) == 0 {
			t.Errorf("GET /%s = %d, %d bytes", ref[1], f.StatusCode, len(f.Body))
		}
	}
	if r := api.Do(t, "GET", "/docs", "", "If-None-Match", r.Header.Get("ETag")); r.StatusCode != 304 || r.Body != "" {
		t.Errorf("GET /docs with its ETag = %d %q, want 304", r.StatusCode, r.Body)
	}
}

// TestIcon: GET /favicon.ico, which browsers ask of every site they open,
// is a small icon of the 16 and 32 pixel squares browsers draw, public,
// with an ETag that revalidates to 304, in every build.
func TestIcon(t *testing.T) {
	api := servicetest.New(t)
	r := api.Do(t, "GET", "/favicon.ico", "")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/vnd.microsoft.icon" || r.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("GET /favicon.ico = %d %v", r.StatusCode, r.Header)
	}
	// An ICO file: a header (reserved 0, type 1, the count of images),
	// then an entry of 16 bytes an image, its width first (0 for 256).
	b := []byte(r.Body)
	if len(b) < 6 || len(b) > 1024 || binary.LittleEndian.Uint16(b) != 0 || binary.LittleEndian.Uint16(b[2:]) != 1 {
		t.Fatalf("GET /favicon.ico: %d bytes, not a small ICO file: % x", len(b), b[:min(len(b), 6)])
	}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if len(b) < 6+16*n {
		t.Fatalf("GET /favicon.ico: %d bytes, too few for the entries of %d icons", len(b), n)
	}
	var sizes []int
	for i := range n {
		sizes = append(sizes, int(b[6+16*i]))
	}
	if !slices.Equal(sizes, []int{16, 32}) {
		t.Errorf("GET /favicon.ico holds icons of %v pixels, want 16 and 32", sizes)
	}
	if r := api.Do(t, "GET", "/favicon.ico", "", "If-None-Match", r.Header.Get("ETag")); r.StatusCode != 304 || r.Body != "" {
		t.Errorf("GET /favicon.ico with its ETag = %d %q, want 304", r.StatusCode, r.Body)
	}
}

// built skips t when the page's files are not in this build.
func built(t *testing.T) {
	if err := swaggerui.Built(); err != nil {
		t.Skipf("the docs page is not in this build: run `make deps` (npm ci, which needs Node): %v", err)
	}
}

// TestSwaggerUI: Swagger UI's script is the pinned package's, gzip-
// compressed for a client that takes gzip and plain for one that does not,
// each with its own ETag; HEAD answers the same without a body.
func TestSwaggerUI(t *testing.T) {
	want, err := os.ReadFile("../../node_modules/swagger-ui-dist/swagger-ui-bundle.js")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no node_modules/swagger-ui-dist to compare the served script with: run `make deps` (npm ci, which needs Node)")
	}
	if err != nil {
		t.Fatalf("the pinned swagger-ui-dist (make deps): %v", err)
	}
	api := servicetest.New(t)
	const path = "/docs/swagger-ui-bundle.js"
	zipped := api.Do(t, "GET", path, "", "Accept-Encoding", "gzip")
	plain := api.Do(t, "GET", path, "")
	for _, r := range []servicetest.Response{zipped, plain} {
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("GET %s = %d %v", path, r.StatusCode, r.Header)
		}
	}
	if zipped.Header.Get("Content-Encoding") != "gzip" || plain.Header.Get("Content-Encoding") != "" {
		t.Errorf("Content-Encoding %q with gzip, %q without", zipped.Header.Get("Content-Encoding"), plain.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(strings.NewReader(zipped.Body))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, want) || plain.Body != string(want) {
		t.Errorf("GET %s: %d bytes gzip-compressed (%d unzipped), %d plain; the package's file has %d (%v)", path, len(zipped.Body), len(unzipped), len(plain.Body), len(want), err)
	}
	if zipped.Header.Get("ETag") == plain.Header.Get("ETag") {
		t.Errorf("one ETag %s for both encodings", zipped.Header.Get("ETag"))
	}
	head := api.Do(t, "HEAD", path, "", "Accept-Encoding", "gzip")
	if head.StatusCode != 200 || head.Body != "" || head.Header.Get("ETag") != zipped.Header.Get("ETag") || head.Header.Get("Content-Length") != zipped.Header.Get("Content-Length") {
		t.Errorf("HEAD %s = %d, %d bytes, %v", path, head.StatusCode, len(head.Body), head.Header)
	}
}

// TestUnknownFile: a file the page does not have is 404, a problem.
func TestUnknownFile(t *testing.T) {
	built(t)
	api := servicetest.New(t)
	for _, file := range []string{"index.html", "swagger-ui.js", "..%2fpage.html", "page.html"} {
		r := api.Do(t, "GET", "/docs/"+file, "")
		if r.StatusCode != 404 || r.Header.Get("Content-Type") != rest.ProblemMediaType {
			t.Errorf("GET /docs/%s = %d %s", file, r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
}

// TestDemoLogin: the page make run serves carries the demo login for
// POST /login's example, escaped for an attribute; a deployed stage's page
// carries none, so no password reaches its readers.
func TestDemoLogin(t *testing.T) {
	built(t)
	demo := &swaggerui.Login{Email: `ada+"docs"@quire.example`, Password: "quire-admin-password"}
	for _, login := range []*swaggerui.Login{nil, demo} {
		api := servicetest.New(t, servicetest.Option{Config: func(c *service.Config) { c.DocsLogin = login }})
		r := api.Do(t, "GET", "/docs", "")
		m := regexp.MustCompile(`<body data-demo-login="([^"]*)">`).FindStringSubmatch(r.Body)
		switch {
		case login == nil && (m != nil || strings.Contains(r.Body, "data-demo-login")):
			t.Errorf("a page with no demo login carries one: %s", r.Body)
		case login != nil && m == nil:
			t.Errorf("the page has no demo login: %s", r.Body)
		case login != nil:
			var got swaggerui.Login
			if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil || got != *login {
				t.Errorf("data-demo-login = %s (%v), want %+v", m[1], err, *login)
			}
		}
	}
	js, err := os.ReadFile("quire.js")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "quire-admin-password") {
		t.Error("quire.js, served by every stage, names the demo password")
	}
}
