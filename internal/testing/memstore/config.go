package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// ConfigStore keeps the configuration document. It implements config.Store
// as dynamo.ConfigStore does.
type ConfigStore struct{ db *DB }

// Config returns the database's configuration document.
func (db *DB) Config() *ConfigStore { return &ConfigStore{db} }

// chunkBytes is the most one of package dynamo's chunks holds: a head says
// how many chunks its document takes.
const chunkBytes = 380 << 10

// Head returns the head of the stored document: ENOTFOUND when there is
// none.
func (s *ConfigStore) Head(_ context.Context) (config.Head, error) {
	if err := s.db.may(on("GetItem", routes.TableConfig)); err != nil {
		return config.Head{}, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.db.config == nil {
		return config.Head{}, quire.NotFound("configuration document")
	}
	return s.db.config.head, nil
}

// Current returns the head as Head does: the store keeps no cache.
func (s *ConfigStore) Current(ctx context.Context) (config.Head, error) { return s.Head(ctx) }

// Gzip returns the compressed document h names: config.ErrReplaced when
// another has replaced it.
func (s *ConfigStore) Gzip(_ context.Context, h config.Head) ([]byte, error) {
	if err := s.db.may(on("BatchGetItem", routes.TableConfig)); err != nil { // its chunks
		return nil, err
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if d := s.db.config; d == nil || d.head.Generation != h.Generation {
		return nil, config.ErrReplaced
	}
	return slices.Clone(s.db.config.gzip), nil
}

// Commit writes rep, on the condition that the stored head is the one read
// (or, for a first document, that there is none): a *quire.Stale naming
// config.StaleHead.
func (s *ConfigStore) Commit(_ context.Context, rep config.Replacement) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	d := rep.Document
	head := config.Head{Hash: d.Hash, Size: d.Size, Generation: rep.Generation, Chunks: (len(d.Gzip) + chunkBytes - 1) / chunkBytes}
	var t tx
	if rep.Read.Chunks > 0 { // the old chunks go
		t.add("old chunk", on("DeleteItem", routes.TableConfig), nil, func() {})
	}
	t.add(config.StaleHead, on("PutItem", routes.TableConfig), func() bool {
		if rep.Created {
			return s.db.config == nil
		}
		return s.db.config != nil && s.db.config.head.Hash == rep.Read.Hash
	}, func() { s.db.config = &document{head: head, gzip: slices.Clone(d.Gzip)} })
	t.publish(s.db, rep.Event)
	if err := s.db.commit(&t, nil); err != nil {
		return fmt.Errorf("put configuration document: %w", err)
	}
	return nil
}
