// Package httpapi is the HTTP layer of Quire's API: each resource group's
// handlers, each route's beside its handler, and each version's
// representations. A handler reads the request, calls its domain package
// (which knows nothing of HTTP), and renders the answer.
package httpapi

import (
	"errors"
	"net/http"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Config serves the configuration document from a config.Store: the
// function's wiring hands it one that a cache.Config wraps, so that a GET
// reads the head only when the one held is config.Staleness old, and the
// chunks only when the document changed.
type Config struct {
	Store config.Store
}

// Routes returns the handler of each config route, keyed as in the route
// table.
func (h *Config) Routes() rest.Handlers {
	return rest.Handlers{
		"GET /config":       h.get,
		"PUT /admin/config": h.put,
	}
}

// get answers the document, gzip-compressed when the client takes gzip.
// Its ETag is checked against If-None-Match before the document is read,
// so a 304 costs the read of the head at most; so does a 200 of the
// document the instance holds. A head that names a document replaced
// meanwhile is read again (see quire.Retry).
func (h *Config) get(w http.ResponseWriter, r *rest.Request) error {
	gz, err := rest.AcceptsGzip(r.Request)
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept-Encoding")
	rest.Shared(w) // the same document for every caller
	var (
		head config.Head
		z    []byte
	)
	for n := 1; ; n++ {
		if head, err = h.Store.Head(r.Context()); err != nil {
			return quire.Reword(err, quire.ENOTFOUND, "No configuration document is stored yet; an admin stores one with PUT /admin/config.")
		}
		if done, err := rest.NotModified(w, r.Request, r.ETag(head.Hash, gz)); done || err != nil {
			return err
		}
		if z, err = h.Store.Gzip(r.Context(), head); errors.Is(err, config.ErrReplaced) {
			err = &quire.Stale{What: config.StaleHead}
		}
		again, err := quire.Retry(r.Context(), n, err)
		if again {
			continue
		}
		if _, stale := errors.AsType[*quire.Stale](err); stale {
			return quire.Errorf(quire.EUNAVAILABLE, "The configuration document is being replaced; retry in a moment.")
		}
		if err != nil {
			return err
		}
		break
	}
	hdr := http.Header{}
	hdr.Set("Content-Type", r.MediaType)
	resp := idempotency.Response{Status: http.StatusOK, Header: hdr, Body: z}
	if gz {
		hdr.Set("Content-Encoding", "gzip")
	} else if resp.Body, err = config.Gunzip(z, head); err != nil {
		return err
	}
	rest.Write(w, resp)
	return nil
}

// put replaces the document whole: 201 when there was none, 204
// otherwise, each with the new ETag.
func (h *Config) put(w http.ResponseWriter, r *rest.Request) error {
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	body, err := rest.ReadJSON(r.Request, config.MaxBytes)
	if err != nil {
		return err
	}
	d, err := config.Parse(body)
	if err != nil {
		return err
	}
	created, err := config.Put(r.Context(), h.Store, d, pre, r.ETag(d.Hash, false))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", r.ETag(d.Hash, false))
	if created {
		w.Header().Set("Location", r.Location("/config"))
		w.WriteHeader(http.StatusCreated)
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
