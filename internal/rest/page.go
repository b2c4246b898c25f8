package rest

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/quireapi/quire/internal/quire"
)

// Page bounds: the default and largest number of items per page.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// MaxCursorLen is the length of the longest cursor Quire makes: an id of
// quire.MaxIDLen digits (every page is of a collection ordered by id, see
// ParseIDPage) in unpadded base64url. A longer one is none of Quire's.
const MaxCursorLen = (quire.MaxIDLen*8 + 5) / 6

// Page is what a client asked of a collection: at most Limit items, after
// the position a previous page's cursor names (After is "" for the first).
type Page struct {
	Limit int
	After string
}

// ParsePage reads the limit and cursor query parameters (see Param). A
// limit outside 1..MaxLimit or a cursor that is not one Quire made is
// EINVALID naming it.
func ParsePage(r *http.Request) (Page, error) {
	p := Page{Limit: DefaultLimit}
	s, ok, err := Param(r, "limit")
	if err != nil {
		return Page{}, err
	}
	if ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return Page{}, ParamError("limit", "must be an integer from 1 to "+strconv.Itoa(MaxLimit))
		}
		p.Limit = n
	}
	c, ok, err := Param(r, "cursor")
	if err != nil {
		return Page{}, err
	}
	if ok {
		b, err := base64.RawURLEncoding.Strict().DecodeString(c) // as SetNext writes it
		if err != nil || len(b) == 0 || len(c) > MaxCursorLen {
			return Page{}, invalidCursor()
		}
		p.After = string(b)
	}
	return p, nil
}

// ParseIDPage reads the limit and cursor of a collection ordered by id,
// whose cursors are the id a page starts after, as quire.ID.String writes
// it.
func ParseIDPage(r *http.Request) (limit int, after quire.ID, err error) {
	p, err := ParsePage(r)
	if err != nil || p.After == "" {
		return p.Limit, 0, err
	}
	if after, err = quire.ParseID(p.After); err != nil {
		return 0, 0, invalidCursor()
	}
	return p.Limit, after, nil
}

// invalidCursor is the error of a cursor Quire did not make.
func invalidCursor() error {
	return ParamError("cursor", "is not valid; use the next link of a previous page")
}

// SetNext adds the RFC 8288 Link header to the next page, which starts after
// the position after, keeping every other query parameter of r.
func SetNext(w http.ResponseWriter, r *http.Request, after string) {
	q := r.URL.Query()
	q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(after)))
	w.Header().Add("Link", "<"+URL(r, r.URL.Path)+"?"+q.Encode()+`>; rel="next"`)
}
