package rest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/telemetry"
)

// MediaTypeJSON is the media type of responses that name no version.
const MediaTypeJSON = "application/json"

// VendorType returns the media type of API version v:
// application/vnd.quire.v2+json.
func VendorType(v int) string { return "application/vnd.quire.v" + strconv.Itoa(v) + "+json" }

// negotiate chooses the representation of a versioned route for r: the
// version its path names (0: none), in a media type its Accept header
// takes. A path without a version takes the version from Accept's
// application/vnd.quire.v<N>+json, and is the oldest version not past its
// sunset (routes.Retirements) when Accept names none. It returns an
// ENOTACCEPTABLE error when Accept takes nothing the route can answer with.
// It sets r's Version, MediaType and version prefix, and tells a client of a
// version being retired so (see retiring).
func negotiate(w http.ResponseWriter, r *Request, pathVersion int) error {
	type offer struct {
		mediaType string
		version   int
	}
	var offers []offer
	for _, v := range routes.Versions {
		if pathVersion == 0 || pathVersion == v {
			offers = append(offers, offer{VendorType(v), v})
		}
	}
	// application/json comes first: among equal choices (Accept: */*)
	// the plain type wins, in the path's version or the oldest not gone.
	now, plain := time.Now(), offers[len(offers)-1].version // the newest, when every one is gone
	for _, o := range offers {
		if !routes.Gone(o.version, now) {
			plain = o.version
			break
		}
	}
	offers = append([]offer{{MediaTypeJSON, plain}}, offers...)

	ranges := ParseAccept(strings.Join(r.Header.Values("Accept"), ","))
	best, bestQ, bestSpec := -1, 0.0, -1
	for i, o := range offers {
		q, spec := 1.0, 0
		if ranges != nil {
			q, spec = quality(ranges, o.mediaType)
		}
		if q > bestQ || (q == bestQ && q > 0 && spec > bestSpec) {
			best, bestQ, bestSpec = i, q, spec
		}
	}
	if best < 0 {
		return notAcceptable(ranges, pathVersion)
	}
	r.Version, r.MediaType, r.resource = offers[best].version, offers[best].mediaType, true
	if pathVersion != 0 {
		r.prefix = routes.VersionPrefix(pathVersion)
	}
	telemetry.FromContext(r.Context()).SetVersion(r.Version)
	return retiring(w, r)
}

// retiring tells a client of a version being retired so (see
// routes.Retirement): before its sunset, Deprecation, Sunset and a Link to
// its changelog on every answer; after, an EGONE error, with a Link to the
// resource in the version that succeeds it.
func retiring(w http.ResponseWriter, r *Request) error {
	v := r.Version
	retirement, ok := routes.Retirements[v]
	if !ok {
		return nil
	}
	now := time.Now()
	if !routes.Gone(v, now) {
		h := w.Header()
		h.Set("Deprecation", "@"+strconv.FormatInt(retirement.Deprecated.Unix(), 10))
		h.Set("Sunset", retirement.Sunset.UTC().Format(http.TimeFormat))
		if retirement.Changelog != "" {
			h.Add("Link", "<"+retirement.Changelog+`>; rel="deprecation"; type="text/html"`)
		}
		return nil
	}
	gone := fmt.Sprintf("Version %d of the API was retired on %s.", v, retirement.Sunset.UTC().Format(time.DateOnly))
	next := routes.Successor(v, now)
	if next == 0 {
		return quire.Errorf(quire.EGONE, "%s", gone)
	}
	path := basePath(r.Request) + routes.VersionPrefix(next) + strings.TrimPrefix(r.URL.Path, r.prefix)
	w.Header().Add("Link", "<"+path+`>; rel="successor-version"`)
	return quire.Errorf(quire.EGONE, "%s Version %d serves this resource at %s.", gone, next, path)
}

func notAcceptable(ranges []MediaRange, pathVersion int) error {
	var types []string
	for _, v := range routes.Versions {
		types = append(types, VendorType(v))
	}
	for _, mr := range ranges {
		if v, ok := vendorVersion(mr.Type); ok && mr.Q > 0 {
			switch {
			case pathVersion != 0 && v != pathVersion:
				return quire.Errorf(quire.ENOTACCEPTABLE,
					"This path serves API version %d; ask for %s or %s, or use the path under %s.",
					pathVersion, MediaTypeJSON, VendorType(pathVersion), routes.VersionPrefix(v))
			case !slices.Contains(routes.Versions, v):
				return quire.Errorf(quire.ENOTACCEPTABLE, "API version %d does not exist; ask for one of %s.",
					v, strings.Join(types, ", "))
			}
		}
	}
	return quire.Errorf(quire.ENOTACCEPTABLE, "Nothing the Accept header takes can be sent; this route answers %s or %s.",
		MediaTypeJSON, strings.Join(types, ", "))
}

// vendorVersion returns N of application/vnd.quire.vN+json.
func vendorVersion(mediaType string) (int, bool) {
	s, ok := strings.CutPrefix(strings.ToLower(mediaType), "application/vnd.quire.v")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "+json")
	if !ok || s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// MediaRange is one element of an Accept header: a media type, possibly
// with wildcards ("*/*", "application/*"), and its quality from 0 to 1.
type MediaRange struct {
	Type string // lower case
	Q    float64
}

// ParseAccept parses an Accept header (RFC 9110 section 12.5.1). Elements
// that do not parse are left out; it returns nil for an empty header,
// which accepts anything, and an empty non-nil slice when no element
// parses, which accepts nothing.
func ParseAccept(h string) []MediaRange {
	if strings.TrimSpace(h) == "" {
		return nil
	}
	out := []MediaRange{}
	for _, elem := range strings.Split(h, ",") {
		params := strings.Split(elem, ";")
		typ := strings.ToLower(strings.TrimSpace(params[0]))
		main, sub, ok := strings.Cut(typ, "/")
		if !ok || !isToken(main) || !isToken(sub) || (main == "*" && sub != "*") {
			continue
		}
		mr := MediaRange{Type: typ, Q: 1}
		for _, p := range params[1:] {
			name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(name), "q") {
				mr.Q, ok = parseQ(strings.TrimSpace(value))
				break // parameters after q are accept-extensions
			}
		}
		if ok {
			out = append(out, mr)
		}
	}
	return out
}

// parseQ reads a qvalue: 0 to 1 with at most three decimals.
func parseQ(s string) (float64, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	if len(s) > 1 && (s[1] != '.' || strings.TrimLeft(s[2:], "0123456789") != "") {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || q > 1 {
		return 0, false
	}
	return q, true
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// quality returns the quality ranges give mediaType, from the most specific
// range that matches it, and that range's specificity (2 for the type
// itself, 1 for type/*, 0 for */*). A type no range matches has quality 0.
func quality(ranges []MediaRange, mediaType string) (q float64, specificity int) {
	main, _, _ := strings.Cut(mediaType, "/")
	specificity = -1
	for _, mr := range ranges {
		s := -1
		switch mr.Type {
		case mediaType:
			s = 2
		case main + "/*":
			s = 1
		case "*/*":
			s = 0
		}
		if s > specificity || (s == specificity && mr.Q > q) {
			q, specificity = mr.Q, s
		}
	}
	if specificity < 0 {
		return 0, -1
	}
	return q, specificity
}
