package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// settle bounds how long after its time an event commits: its time is
// taken in the request that commits it, which the gateway stops after 10 s
// (apigw.FunctionTimeout). So when an event is delivered, every event whose
// time is more than settle before its own committed before it, and, the
// stream giving the events in the order of their commits, was delivered
// first.
const settle = time.Minute

// A Checkpoint says which events of the outbox were delivered (or, a
// Follower's own, handed on): every event whose time is before Before, and
// of the later ones those Delivered names. Before trails the latest time
// delivered by settle, so that Delivered names the events of about a
// minute. A Follower reads the outbox table for the events its checkpoint
// does not name after a restart, or when the stream has lost its place: the
// table keeps each event 7 days, the stream 24 hours.
type Checkpoint struct {
	Before time.Time `json:"before"`
	// Delivered holds the time of each event delivered, by its id.
	Delivered map[string]time.Time `json:"delivered,omitempty"`
}

// NewCheckpoint returns the checkpoint of a delivery of the events
// committed from now on, when none is being committed (make run's API does
// not serve yet): an event decided before now was committed before now.
func NewCheckpoint(now time.Time) Checkpoint {
	return Checkpoint{Before: now}
}

// Add records ev as delivered.
func (c *Checkpoint) Add(ev quire.Event) {
	if before := ev.Time.Add(-settle); before.After(c.Before) {
		c.Before = before
		maps.DeleteFunc(c.Delivered, func(_ string, t time.Time) bool { return t.Before(before) })
	}
	if ev.Time.Before(c.Before) {
		return // Before names it
	}
	if c.Delivered == nil {
		c.Delivered = map[string]time.Time{}
	}
	c.Delivered[ev.ID] = ev.Time
}

// pending reports whether c does not name ev as delivered.
func (c Checkpoint) pending(ev quire.Event) bool {
	return !ev.Time.Before(c.Before) && !c.has(ev.ID)
}

// has reports whether Delivered names the event id.
func (c Checkpoint) has(id string) bool {
	_, ok := c.Delivered[id]
	return ok
}

// ReadCheckpoint returns the checkpoint kept in file. The error wraps
// fs.ErrNotExist when there is none, and says what is wrong with one that
// cannot be read.
func ReadCheckpoint(file string) (Checkpoint, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := parseCheckpoint(b)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("the events' checkpoint %s: %w", file, err)
	}
	return c, nil
}

// parseCheckpoint reads a checkpoint as Write writes it.
func parseCheckpoint(b []byte) (Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return Checkpoint{}, err
	}
	if c.Before.IsZero() {
		return Checkpoint{}, errors.New("no time before which every event was delivered")
	}
	for id, t := range c.Delivered {
		if id == "" || t.IsZero() {
			return Checkpoint{}, fmt.Errorf("an event delivered without its id or time: %q at %v", id, t)
		}
	}
	return c, nil
}

// Write keeps c in file: whole, or not at all (it replaces file with a
// file written beside it).
func (c Checkpoint) Write(file string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("the events' checkpoint: %w", err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write the events' checkpoint: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write the events' checkpoint: %w", err)
	}
	return nil
}
