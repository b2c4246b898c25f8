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
	"time"
	"unicode/utf8"

	"github.com/quireapi/quire/internal/quire"
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
	// is none. A cache may answer it (see cache.Config).
	Head(ctx context.Context) (Head, error)
	// Current returns the head as stored now, never from a cache, for a
	// write to decide on: ENOTFOUND when there is none.
	Current(ctx context.Context) (Head, error)
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
	if _, err := gz.Write(compact.Bytes()); err != nil {
		return Document{}, fmt.Errorf("compress the configuration document: %w", err)
	}
	if err := gz.Close(); err != nil {
		return Document{}, fmt.Errorf("compress the configuration document: %w", err)
	}
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

// Staleness bounds how old the head GET /config answers from may be: a
// function instance reads the head again once the head it holds was read
// (or written, by a PUT in the same instance) Staleness ago. So a document
// one instance stores is served by every other within Staleness of its
// commit, and by its own at once; and the head item, one partition key
// that every GET reads, takes at most one read per warm instance per
// Staleness, whatever the number of users: with Lambda's default of 1,000
// concurrent executions per account and Region, at most 1,000 read units
// a second, a third of the partition's 3,000. (A Lambda instance of a Go
// function serves one request at a time; the local gateway's concurrent
// requests may read the head together.)
//
// The head is read consistently, 1 unit: with the cache the read is rare,
// and a consistent read makes Staleness the whole bound, where an
// eventually consistent one (half a unit) would add a lag DynamoDB does
// not bound.
const Staleness = time.Second
