package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// Conditional requests (RFC 9110 section 13). Every representation's ETag
// is made from the content hash stored with what it represents, the API
// version and the content encoding: "<hash>-v1", "<hash>-v2-gzip". Two
// representations never share a strong tag, and a write's If-Match names
// the stored hash that DynamoDB's condition checks.

// Tag returns the strong entity tag of the representation of content whose
// hash is hash in API version v, gzip-compressed or not.
func Tag(hash string, v int, gzip bool) string {
	tag := `"` + hash + "-v" + strconv.Itoa(v)
	if gzip {
		tag += "-gzip"
	}
	return tag + `"`
}

// EntityTag is one element of an If-Match or If-None-Match list.
type EntityTag struct {
	Weak   bool
	Opaque string // without its quotes
}

// ParseTags parses the value of If-Match or If-None-Match: "*" (any is
// true) or a list of entity tags, weak or strong. ok is false when the value
// is neither.
func ParseTags(value string) (tags []EntityTag, any, ok bool) {
	if strings.TrimSpace(value) == "*" {
		return nil, true, true
	}
	rest := value
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return tags, false, len(tags) > 0
		}
		var t EntityTag
		if strings.HasPrefix(rest, "W/") {
			t.Weak, rest = true, rest[2:]
		}
		if !strings.HasPrefix(rest, `"`) {
			return nil, false, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false, false
		}
		t.Opaque, rest = rest[1:1+end], rest[2+end:]
		for _, c := range []byte(t.Opaque) {
			if c < 0x21 || c == 0x7f { // etagc: %x21 / %x23-7E / obs-text
				return nil, false, false
			}
		}
		tags = append(tags, t)
		if rest = strings.TrimLeft(rest, " \t"); rest != "" && rest[0] != ',' {
			return nil, false, false
		}
	}
}

// condition is one of r's condition headers: "*" (any), a list of tags,
// or absent.
type condition struct {
	tags         []EntityTag
	any, present bool
}

// conditions parses r's If-Match and If-None-Match; a malformed one, or
// one over MaxHeaderLen bytes, is EINVALID.
func conditions(r *http.Request) (match, none condition, err error) {
	parse := func(name string) (condition, error) {
		vs := r.Header.Values(name)
		if len(vs) == 0 {
			return condition{}, nil
		}
		v, err := headerValue(r, name)
		if err != nil {
			return condition{}, err
		}
		tags, any, ok := ParseTags(v)
		if !ok || (any && len(vs) > 1) {
			return condition{}, quire.Errorf(quire.EINVALID,
				`The %s header must be "*" or a list of entity tags, such as "abc-v1" or W/"abc-v1".`, name)
		}
		return condition{tags, any, true}, nil
	}
	if match, err = parse("If-Match"); err != nil {
		return match, none, err
	}
	none, err = parse("If-None-Match")
	return match, none, err
}

// NotModified answers a GET of a representation whose ETag is tag: it
// sets ETag and, unless the handler has (see Shared), Cache-Control:
// no-store (a client's own copy can still be revalidated with
// If-None-Match; no cache keeps one), and when If-None-Match
// matches tag (weak comparison) it writes 304 Not Modified without a body
// and reports done. An If-Match that tag fails (strong comparison) is
// EPRECONDITION; a malformed header EINVALID.
func NotModified(w http.ResponseWriter, r *http.Request, tag string) (done bool, err error) {
	opaque := strings.Trim(tag, `"`)
	match, none, err := conditions(r)
	if err != nil {
		return false, err
	}
	if match.present && !match.any && !matches(match.tags, opaque, true) {
		return false, quire.Errorf(quire.EPRECONDITION, "The representation's ETag is not one If-Match names.")
	}
	h := w.Header()
	h.Set("ETag", tag)
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	if none.present && (none.any || matches(none.tags, opaque, false)) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		w.WriteHeader(http.StatusNotModified)
		return true, nil
	}
	return false, nil
}

// Shared says the answer to come holds no one's personal data (a book, an
// author, the configuration document): a client's cache may keep it, and
// must revalidate it before each use (Cache-Control: private, no-cache).
// Every other answer of the API is no-store.
func Shared(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "private, no-cache")
}

func matches(tags []EntityTag, opaque string, strong bool) bool {
	for _, t := range tags {
		if t.Opaque == opaque && !(strong && t.Weak) {
			return true
		}
	}
	return false
}

// Precondition reads the precondition of a write (PUT or DELETE) from r's
// If-Match and If-None-Match headers. If-Match takes the strong tag of any
// representation of the resource's current state (any API version or
// encoding), so a tag read from GET /config serves for PUT /admin/config;
// a weak tag, or one Quire did not make, never matches. A malformed header
// is EINVALID.
func Precondition(r *http.Request) (quire.Precondition, error) {
	var p quire.Precondition
	match, none, err := conditions(r)
	if err != nil {
		return p, err
	}
	if match.present {
		p.Exists = match.any
		for _, t := range match.tags {
			if h, ok := tagHash(t); ok && !t.Weak {
				p.Match = append(p.Match, h)
			}
		}
		if !match.any && len(p.Match) == 0 {
			p.Match = []string{""} // tags, none of them Quire's: nothing matches
		}
	}
	if none.present {
		p.Absent = none.any
		for _, t := range none.tags { // weak comparison
			if h, ok := tagHash(t); ok {
				p.NoneOf = append(p.NoneOf, h)
			}
		}
	}
	return p, nil
}

// tagHash returns the content hash in an entity tag Quire made.
func tagHash(t EntityTag) (string, bool) {
	if len(t.Opaque) <= quire.HashLen {
		return "", false
	}
	hash, rep := t.Opaque[:quire.HashLen], t.Opaque[quire.HashLen:]
	rep, ok := strings.CutPrefix(strings.TrimSuffix(rep, "-gzip"), "-v")
	if !ok {
		return "", false
	}
	v, err := strconv.Atoi(rep)
	if err != nil || strconv.Itoa(v) != rep {
		return "", false
	}
	for _, known := range routes.Versions {
		if v == known {
			return hash, true
		}
	}
	return "", false
}
