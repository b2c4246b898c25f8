// Package config is the shop's configuration document: one JSON object of
// up to MaxBytes, which admins replace whole (PUT /admin/config) and every
// signed-in user reads (GET /config). It is stored gzip-compressed, so a
// client that takes gzip gets the stored bytes as they are, and its content
// hash is kept apart from it, so a conditional GET that matches reads the
// hash only, whatever the document's size.
package config

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
)

// MaxBytes bounds the document, as sent in a PUT: 2 MiB.
const MaxBytes = 2 << 20

// Head describes the stored document without holding it.
type Head struct {
	Hash string // the content hash of the document's compact JSON
	Size int    // the length of the compact JSON
	// Where the store keeps the document: the generation of its chunks and
	// their number.
	Generation string
	Chunks     int
}

// Document is the configuration document: its head and its compact JSON,
// gzip-compressed.
type Document struct {
	Head
	Gzip []byte
}

// ErrReplaced is returned by Store.Gzip when the document a head names was
// replaced while it was read; reading the head again finds the new one.
var ErrReplaced = errors.New("config: the document was replaced while it was read")

// Store keeps the configuration document.
type Store interface {
	// Head returns the head of the stored document: ENOTFOUND when there
	// is none.
	Head(ctx context.Context) (Head, error)
	// Gzip returns the compressed document h names, or ErrReplaced.
	Gzip(ctx context.Context, h Head) ([]byte, error)
	// Commit writes rep (see Replace) in one transaction: a *quire.Stale
	// naming StaleHead, with nothing written, when the head is not as
	// read.
	Commit(ctx context.Context, rep Replacement) error
}

// Parse validates body as a configuration document, a JSON object in
// UTF-8, and returns it compact (insignificant whitespace removed, members
// and numbers as sent) and compressed: EINVALID otherwise.
func Parse(body []byte) (Document, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case !utf8.Valid(body):
		return Document{}, quire.Errorf(quire.EINVALID, "The configuration document is not valid UTF-8.")
	case len(trimmed) == 0 || trimmed[0] != '{':
		return Document{}, quire.Errorf(quire.EINVALID, "The configuration document must be a JSON object.")
	}
	var compact bytes.Buffer
	compact.Grow(len(body))
	if err := json.Compact(&compact, body); err != nil {
		return Document{}, quire.Errorf(quire.EINVALID, "The configuration document is not valid JSON: %s.", err)
	}
	var z bytes.Buffer
	gz := gzip.NewWriter(&z)
	gz.Write(compact.Bytes()) // writes to a bytes.Buffer do not fail
	gz.Close()
	return Document{Head: Head{Hash: quire.HashBytes(compact.Bytes()), Size: compact.Len()}, Gzip: z.Bytes()}, nil
}

// Gunzip returns the JSON of a document whose compressed form is z and
// whose head is h.
func Gunzip(z []byte, h Head) ([]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("open document %s: %w", h.Hash, err)
	}
	out := make([]byte, 0, h.Size)
	buf := bytes.NewBuffer(out)
	if _, err := io.Copy(buf, io.LimitReader(gz, MaxBytes+1)); err != nil {
		return nil, fmt.Errorf("read document %s: %w", h.Hash, err)
	}
	if buf.Len() != h.Size {
		return nil, fmt.Errorf("document %s: %d bytes, its head says %d", h.Hash, buf.Len(), h.Size)
	}
	return buf.Bytes(), nil
}

// Handlers serves the configuration document from a Store. It keeps, for
// the function instance, the head it last read or wrote and the current
// document, compressed as stored: a GET reads the head only when the one
// held is Staleness old, and the chunks only when the document changed. A
// PUT holds the document it stored at once, so its instance serves it to
// the next GET. Holding the document costs its compressed size: at most
// about 2 MiB, and 1.7 MB for 2 MiB of random ASCII.
type Handlers struct {
	Store Store
	// Now is the clock that dates the head held; nil is time.Now. Tests
	// set it to move past Staleness without waiting.
	Now func() time.Time

	cache cache
}

// Routes returns the handler of each config route, keyed as in the route
// table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{
		"GET /config":       h.get,
		"PUT /admin/config": h.put,
	}
}

// maxReads bounds how often get reads the head again when the document is
// replaced while it reads it.
const maxReads = 3

// get answers the document, gzip-compressed when the client takes gzip.
// Its ETag is checked against If-None-Match before the document is read,
// so a 304 costs the read of the head at most; so does a 200 of the
// document the instance holds.
func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	gz := rest.AcceptsGzip(r)
	w.Header().Add("Vary", "Accept-Encoding")
	fresh := false
	for range maxReads {
		e, err := h.current(r.Context(), fresh)
		if err != nil {
			return err
		}
		if done, err := rest.NotModified(w, r, rest.ETag(r, e.head.Hash, gz)); done || err != nil {
			return err
		}
		z := e.gzip
		if z == nil {
			z, err = h.Store.Gzip(r.Context(), e.head)
			if errors.Is(err, ErrReplaced) {
				fresh = true // the head held names a replaced document
				continue
			}
			if err != nil {
				return err
			}
			h.cache.fill(e.head, z)
		}
		resp := idempotency.Response{Status: http.StatusOK, Header: http.Header{}, Body: z}
		resp.Header.Set("Content-Type", rest.MediaType(r))
		if gz {
			resp.Header.Set("Content-Encoding", "gzip")
		} else if resp.Body, err = Gunzip(z, e.head); err != nil {
			return err
		}
		rest.Write(w, resp)
		return nil
	}
	return quire.Errorf(quire.EUNAVAILABLE, "The configuration document is being replaced; retry in a moment.")
}

// put replaces the document whole: 201 when there was none, 204
// otherwise, each with the new ETag.
func (h *Handlers) put(w http.ResponseWriter, r *http.Request) error {
	pre, err := rest.Precondition(r)
	if err != nil {
		return err
	}
	body, err := rest.ReadJSON(r, MaxBytes)
	if err != nil {
		return err
	}
	d, err := Parse(body)
	if err != nil {
		return err
	}
	start := h.now()
	created, err := Put(r.Context(), h.Store, d, pre)
	if err != nil {
		return err
	}
	// Held while it is current: a copy, without the spare capacity of the
	// buffer it was compressed into.
	h.cache.put(entry{head: d.Head, gzip: bytes.Clone(d.Gzip)}, start)
	w.Header().Set("ETag", rest.ETag(r, d.Hash, false))
	if created {
		w.Header().Set("Location", rest.Location(r, "/config"))
		w.WriteHeader(http.StatusCreated)
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
