package rest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quireapi/quire/internal/routes"
)

// CORS is Quire's cross-origin policy (the Fetch standard's CORS protocol):
// the origins whose pages may call the API from a browser. A page of an
// allowed origin gets, on every answer (errors included),
// Access-Control-Allow-Origin with its origin and the headers a client reads
// exposed; its preflights get the path's methods, the request headers Quire
// reads and a max age. Any other origin gets no CORS header, and its
// browser keeps the answer from the page. No credentials are involved:
// tokens travel in Authorization, which a page sets itself, never in
// cookies, so Access-Control-Allow-Credentials is never sent.
type CORS struct {
	origins []originPattern
}

// CORSAllowHeaders are the request headers Quire reads, which preflights
// allow.
var CORSAllowHeaders = []string{"Accept", "Authorization", "Content-Type", "Idempotency-Key", "If-Match", "If-None-Match", "X-Idempotency-Key"}

// CORSExposeHeaders are the response headers a page may read besides the
// CORS-safelisted ones (Content-Type, Cache-Control and a few more).
var CORSExposeHeaders = []string{"Deprecation", "ETag", "Idempotent-Replayed", "Link", "Location", "Retry-After", "Sunset", "WWW-Authenticate", "X-Amzn-Requestid"}

// CORSMaxAge is how long a browser may keep a preflight's answer: two hours,
// Chromium's cap.
const CORSMaxAge = 7200

// originPattern is one allowed origin: an exact origin, an origin with any
// port ("http://localhost:*"), or any origin ("*").
type originPattern struct {
	any       bool
	scheme    string
	host      string
	port      string // "*" for any
	canonical string
}

// ParseCORS parses a comma-separated list of allowed origins, as
// CORS_ORIGINS holds it: "*" for any origin, an origin as a browser sends it
// ("https://shop.example.com", "http://localhost:3000"), or an origin whose
// port is "*" ("http://localhost:*"). An empty list allows none. It returns
// an error naming the first entry that is none of these.
func ParseCORS(list string) (CORS, error) {
	var c CORS
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if entry == "*" {
			c.origins = append(c.origins, originPattern{any: true, canonical: "*"})
			continue
		}
		p, err := parseOriginPattern(entry)
		if err != nil {
			return CORS{}, fmt.Errorf("CORS origin %q: %w", entry, err)
		}
		c.origins = append(c.origins, p)
	}
	return c, nil
}

func parseOriginPattern(s string) (originPattern, error) {
	anyPort := strings.HasSuffix(s, ":*")
	u, err := url.Parse(strings.TrimSuffix(s, ":*"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.HasSuffix(u.Host, ":") ||
		u.User != nil || u.Opaque != "" || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return originPattern{}, fmt.Errorf("want scheme://host, scheme://host:port or scheme://host:*, as a browser's Origin header")
	}
	if strings.Contains(u.Host, "*") {
		return originPattern{}, fmt.Errorf("want * only as the whole list entry or as the port")
	}
	if len(u.Hostname()) > MaxHostLen-len(":65535") {
		return originPattern{}, fmt.Errorf("want a host of at most %d characters, a DNS name's", MaxHostLen-len(":65535"))
	}
	if u.Host != strings.ToLower(u.Host) {
		return originPattern{}, fmt.Errorf("want the host in lowercase, as browsers send it")
	}
	host, port := u.Host, u.Port()
	if port != "" {
		if anyPort {
			return originPattern{}, fmt.Errorf("want one port or *")
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return originPattern{}, fmt.Errorf("port %q: want 1 to 65535 or *", port)
		}
		host = strings.TrimSuffix(host, ":"+port)
		if port == map[string]string{"http": "80", "https": "443"}[u.Scheme] {
			port = "" // browsers leave the default port out
		}
	}
	if anyPort {
		port = "*"
	}
	canonical := u.Scheme + "://" + host
	if port != "" {
		canonical += ":" + port
	}
	return originPattern{scheme: u.Scheme, host: host, port: port, canonical: canonical}, nil
}

// matches reports whether origin, as a browser sends it, is p.
func (p originPattern) matches(origin string) bool {
	if p.any {
		return true
	}
	if p.port != "*" {
		return origin == p.canonical
	}
	prefix := p.scheme + "://" + p.host
	rest, ok := strings.CutPrefix(origin, prefix)
	if !ok {
		return false
	}
	if rest == "" {
		return true // the scheme's default port
	}
	port, ok := strings.CutPrefix(rest, ":")
	n, err := strconv.Atoi(port)
	return ok && err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == port
}

// Origins returns the allowed origins as they were given, canonical: what
// a gateway that cannot match origins itself is configured with.
func (c CORS) Origins() []string {
	out := make([]string, len(c.origins))
	for i, p := range c.origins {
		out[i] = p.canonical
	}
	return out
}

// MaxOriginLen bounds an origin: a scheme, a host and a port. No browser
// sends a longer one, and none is allowed, not even by "*".
const MaxOriginLen = len("https://") + MaxHostLen

// Allows reports whether origin may call the API from a browser.
func (c CORS) Allows(origin string) bool {
	if origin == "" || len(origin) > MaxOriginLen {
		return false
	}
	for _, p := range c.origins {
		if p.matches(origin) {
			return true
		}
	}
	return false
}

// Apply sets the CORS headers of an answer to r on h: Vary: Origin when
// any origin is allowed (the answer depends on it), and, for an allowed
// Origin, Access-Control-Allow-Origin and Access-Control-Expose-Headers.
// It reports whether r's origin is allowed.
func (c CORS) Apply(h http.Header, r *http.Request) bool {
	if len(c.origins) == 0 {
		return false
	}
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if !c.Allows(origin) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", strings.Join(CORSExposeHeaders, ", "))
	return true
}

// Handler serves next behind the policy: it sets the CORS headers of every
// answer (see Apply) and answers OPTIONS itself on any path of the route
// table, with 204 and Allow: for a preflight of an allowed origin (an
// Access-Control-Request-Method), also the path's methods, the headers
// Quire reads and CORSMaxAge. OPTIONS needs no token: browsers send
// preflights without one.
func (c CORS) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowed := c.Apply(w.Header(), r)
		if r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		template, _, ok := routes.Match(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r) // the 404 of an unknown path
			return
		}
		methods := strings.Join(routes.Allow(template), ", ")
		w.Header().Set("Allow", methods)
		if allowed && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", methods)
			w.Header().Set("Access-Control-Allow-Headers", strings.Join(CORSAllowHeaders, ", "))
			w.Header().Set("Access-Control-Max-Age", strconv.Itoa(CORSMaxAge))
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
}
