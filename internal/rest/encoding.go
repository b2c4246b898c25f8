package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/quireapi/quire/internal/quire"
)

// AcceptsGzip reports whether r's Accept-Encoding takes gzip (RFC 9110
// section 12.5.3): "gzip" (or "x-gzip") with a quality above 0, or, when
// gzip is not named, "*" with a quality above 0. Elements that do not
// parse are left out. A value over MaxHeaderLen bytes is EINVALID.
func AcceptsGzip(r *http.Request) (bool, error) {
	value, err := headerValue(r, "Accept-Encoding")
	if err != nil {
		return false, err
	}
	gzip, star := -1.0, -1.0
	for _, elem := range strings.Split(value, ",") {
		params := strings.Split(elem, ";")
		coding := strings.ToLower(strings.TrimSpace(params[0]))
		q, ok := 1.0, true
		for _, p := range params[1:] {
			name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(name), "q") {
				q, ok = parseQ(strings.TrimSpace(value))
			}
		}
		switch {
		case !ok:
		case coding == "gzip" || coding == "x-gzip":
			gzip = max(gzip, q)
		case coding == "*":
			star = max(star, q)
		}
	}
	if gzip >= 0 {
		return gzip > 0, nil
	}
	return star > 0, nil
}

// ReadJSON reads r's body as one well-formed JSON value of at most limit
// bytes, uncompressed, and returns it as it came. The Content-Type must be
// JSON in UTF-8, as for Decode. It returns EMEDIATYPE for another
// Content-Type or a Content-Encoding, ETOOLARGE for a longer body and
// EINVALID for one that is not JSON, has a string that is not valid UTF-8,
// or names a member twice in one object (names that differ only in case
// are two members: the value is kept as sent, not read into fields).
func ReadJSON(r *http.Request, limit int) ([]byte, error) {
	body, err := readBody(r, limit)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, quire.Errorf(quire.EINVALID, "The request body is empty; send a JSON object.")
	}
	if !json.Valid(body) {
		var v any
		return nil, decodeError(json.Unmarshal(body, &v))
	}
	if err := strict(body, false); err != nil {
		return nil, err
	}
	return body, nil
}
