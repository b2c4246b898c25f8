package config

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// Replacement is a decided replacement of the stored document, for the
// store to commit whole or not at all: the new document, its chunks in a
// new generation, written only over the head as read (Read; none when
// Created), whose chunks it deletes.
type Replacement struct {
	Document   Document
	Generation string
	Read       Head
	Created    bool
	Event      *quire.Event // config.changed
}

// Changed is the data of a config.changed event: the new document's ETag,
// as GET /config answers it uncompressed, and its size in bytes.
type Changed struct {
	ETag string `json:"etag"`
	Size int    `json:"size"`
}

// StaleHead is what the commit of a Replacement may find changed since it
// was read: the What of its *quire.Stale error.
const StaleHead = "head"

// Replace decides storing d in a new generation over the stored document
// whose head is read (nil when none is stored), at now, and its
// config.changed event, which names etag, d's ETag. It refuses when pre
// does not hold for it (EPRECONDITION), and has nothing to write (write
// false) when it holds d already.
func Replace(read *Head, d Document, pre quire.Precondition, generation, etag string, now time.Time) (rep Replacement, write bool, err error) {
	var hash string
	if read != nil {
		hash = read.Hash
	}
	if err := pre.Check(hash); err != nil {
		return Replacement{}, false, err
	}
	if read != nil && read.Hash == d.Hash {
		return Replacement{}, false, nil
	}
	d.Generation, d.Chunks = generation, 0
	ev := quire.NewEvent(quire.EventConfigChanged, "/config", d.Hash, now, Changed{ETag: etag, Size: d.Size})
	rep = Replacement{Document: d, Generation: generation, Created: read == nil, Event: &ev}
	if read != nil {
		rep.Read = *read
	}
	return rep, true, nil
}

// Put stores d, whose ETag is etag, over the stored document in s, if pre
// holds for it, and reports whether none was stored: it reads the head,
// decides (Replace),
// and commits, again when the head changed meanwhile (see quire.Retry),
// which checks pre again. A head that keeps changing is ECONFLICT.
func Put(ctx context.Context, s Store, d Document, pre quire.Precondition, etag string) (created bool, err error) {
	for n := 1; ; n++ {
		var read *Head
		switch h, err := s.Current(ctx); quire.ErrorCode(err) {
		case "":
			read = &h
		case quire.ENOTFOUND:
		default:
			return false, err
		}
		rep, write, err := Replace(read, d, pre, newGeneration(), etag, time.Now())
		if err != nil || !write {
			return false, err
		}
		again, err := quire.Retry(ctx, n, s.Commit(ctx, rep))
		if again {
			continue
		}
		if _, stale := errors.AsType[*quire.Stale](err); stale {
			return false, quire.Errorf(quire.ECONFLICT, "The configuration document changed during the request; retry it.")
		}
		return rep.Created, err
	}
}

// newGeneration returns a random generation id: no write reuses the key
// of a chunk another may still read.
func newGeneration() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
