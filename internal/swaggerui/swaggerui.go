// Package swaggerui serves the API's docs page: GET /docs is Swagger UI (from the
// pinned npm package swagger-ui-dist, built into the function, never fetched
// from elsewhere at run time) over each version's OpenAPI document
// (GET /api/v<N>/openapi.json), where a reader can log in and try every
// route; GET /docs/{file} serves the page's files, and GET /favicon.ico its
// icon, which browsers ask of every site.
package swaggerui

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"sync"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// The page, its script and its icon are Quire's own; Swagger UI's script
// and style sheet are written gzip-compressed into assets by `make deps`.
var (
	//go:embed page.html quire.js
	own embed.FS
	//go:embed favicon.ico
	favicon []byte
	//go:embed assets
	assets embed.FS
)

// Policy is the page's Content-Security-Policy: its scripts, styles and
// calls come from the API itself (Swagger UI's icons are data: URLs), and
// no other site may frame it.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self' " + logoStyle + "; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// logoStyle is the hash of the one inline style sheet of Swagger UI's top
// bar (the one with the version selector): its logo's two colours.
const logoStyle = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

// file is one file of the page, as stored (gzip-compressed or not).
type file struct {
	media string
	body  []byte
	gzip  bool
	tag   string // of the stored bytes
	plain func() ([]byte, error)
}

func newFile(body []byte, media string, gz bool) *file {
	f := &file{media: media, body: body, gzip: gz, tag: `"` + quire.HashBytes(body) + `"`}
	f.plain = sync.OnceValues(func() ([]byte, error) {
		if !gz {
			return body, nil
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	})
	return f
}

// files are the page's files, read once: the path after /docs/ (the page
// itself is "") to the file.
var files = sync.OnceValues(func() (map[string]*file, error) {
	out := map[string]*file{}
	add := func(fsys fs.FS, name, path, media string, gz bool) error {
		body, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		out[name] = newFile(body, media, gz)
		return nil
	}
	for _, f := range []struct {
		fsys              fs.FS
		name, path, media string
		gz                bool
	}{
		{own, "", "page.html", "text/html; charset=utf-8", false},
		{own, "quire.js", "quire.js", "text/javascript; charset=utf-8", false},
		{assets, "swagger-ui-bundle.js", "assets/swagger-ui-bundle.js.gz", "text/javascript; charset=utf-8", true},
		{assets, "swagger-ui-standalone-preset.js", "assets/swagger-ui-standalone-preset.js.gz", "text/javascript; charset=utf-8", true},
		{assets, "swagger-ui.css", "assets/swagger-ui.css.gz", "text/css; charset=utf-8", true},
	} {
		if err := add(f.fsys, f.name, f.path, f.media, f.gz); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// Login is the example body of POST /login on the docs page: make run's
// demo admin. A deployed stage has no demo accounts, and its page offers
// none.
type Login struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// MaxPageLen bounds the docs page, in bytes: a demo login of the longest
// email and password, each character escaped in JSON and in HTML (in 6
// characters at most), fits in it with the page.
const MaxPageLen = 4 << 10

// withLogin returns the page with demo as its body's data-demo-login, which
// quire.js reads (the page's policy runs no inline script). It returns an
// error when the page passes MaxPageLen.
func withLogin(page *file, demo *Login) (*file, error) {
	if demo != nil {
		js, err := json.Marshal(demo)
		if err != nil {
			return nil, err
		}
		body := bytes.Replace(page.body, []byte("<body>"), []byte(`<body data-demo-login="`+html.EscapeString(string(js))+`">`), 1)
		page = newFile(body, page.media, false)
	}
	if len(page.body) > MaxPageLen {
		return nil, fmt.Errorf("the docs page is %d bytes, over %d", len(page.body), MaxPageLen)
	}
	return page, nil
}

// Routes returns the handlers of the docs routes, keyed as in the route
// table: GET / sends a person who opens the API's address to the docs page,
// whose login example is demo, when set.
func Routes(demo *Login) rest.Handlers {
	page := sync.OnceValues(func() (*file, error) {
		all, err := files()
		if err != nil {
			return nil, err
		}
		return withLogin(all[""], demo)
	})
	icon := sync.OnceValue(func() *file { return newFile(favicon, "image/vnd.microsoft.icon", false) })
	return rest.Handlers{
		"GET /": func(w http.ResponseWriter, r *rest.Request) error {
			w.Header().Set("Location", r.Path("/docs")) // relative: the same for every host, so cached publicly
			w.Header().Set("Cache-Control", "public, max-age=300")
			w.WriteHeader(http.StatusFound)
			return nil
		},
		"GET /docs": func(w http.ResponseWriter, r *rest.Request) error {
			f, err := page()
			if err != nil {
				return notBuilt(err)
			}
			return serve(w, r, f, true)
		},
		"GET /docs/{file}": func(w http.ResponseWriter, r *rest.Request) error {
			all, err := files()
			if err != nil {
				return notBuilt(err)
			}
			name := r.PathValue("file")
			if f := all[name]; f != nil && name != "" {
				return serve(w, r, f, false)
			}
			return quire.Errorf(quire.ENOTFOUND, "The docs page has no file %q.", name)
		},
		"GET /favicon.ico": func(w http.ResponseWriter, r *rest.Request) error {
			return serve(w, r, icon(), false)
		},
	}
}

// Built returns nil when the docs page's files are in this build, and
// why not otherwise: `make deps` writes them, with Node.
func Built() error {
	_, err := files()
	return err
}

func notBuilt(err error) error {
	return &quire.Error{Code: quire.EINTERNAL, Message: "The docs page is not in this build.", Err: err}
}

// serve answers f, the page itself or one of its files, gzip-compressed
// when the request takes gzip, with an ETag of what it sends, and 304 for a
// matching If-None-Match.
func serve(w http.ResponseWriter, r *rest.Request, f *file, page bool) error {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	if page {
		h.Set("Content-Security-Policy", Policy)
		h.Set("Referrer-Policy", "no-referrer")
	}
	body, tag := f.body, f.tag
	if f.gzip {
		gz, err := rest.AcceptsGzip(r.Request)
		if err != nil {
			return err
		}
		h.Set("Vary", "Accept-Encoding")
		if gz {
			h.Set("Content-Encoding", "gzip")
			tag = tag[:len(tag)-1] + `-gzip"`
		} else if body, err = f.plain(); err != nil {
			return err
		}
	}
	if done, err := rest.NotModified(w, r.Request, tag); done || err != nil {
		return err
	}
	h.Set("Content-Type", f.media)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}
