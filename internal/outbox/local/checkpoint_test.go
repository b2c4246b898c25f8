package local

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A checkpoint names the events delivered: those of the last minute by
// their ids, the older ones by their time. A delivery that starts from now
// has none before now to deliver.
func TestCheckpoint(t *testing.T) {
	start := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	cp := NewCheckpoint(start)
	if cp.pending(event("before", start.Add(-time.Millisecond))) || !cp.pending(event("at the start", start)) {
		t.Errorf("a delivery starting at %v: want an event of just before it not pending, one of then pending", start)
	}
	for i, id := range []string{"a", "b", "c", "d"} { // a minute apart
		cp.Add(event(id, start.Add(time.Duration(i)*time.Minute)))
	}
	cp.Add(event("late", start.Add(3*time.Minute-5*time.Second))) // decided before d, delivered after it
	for _, c := range []struct {
		id      string
		at      time.Duration // after start
		pending bool
	}{
		{"a", 0, false},
		{"c", 2 * time.Minute, false},
		{"d", 3 * time.Minute, false},
		{"late", 3*time.Minute - 5*time.Second, false},
		{"not delivered, more than a minute before d", 2*time.Minute - time.Second, false},
		{"not delivered, less than a minute before d", 2*time.Minute + time.Second, true},
		{"after d", 4 * time.Minute, true},
	} {
		if got := cp.pending(event(c.id, start.Add(c.at))); got != c.pending {
			t.Errorf("%s at start+%v: pending %v, want %v", c.id, c.at, got, c.pending)
		}
	}
	if len(cp.Delivered) != 3 {
		t.Errorf("the checkpoint names %v, want the events of the minute before the last: c, d, late", cp.Delivered)
	}
}

// A checkpoint written is read back whole; a file that is none is an error
// naming it, and no file is fs.ErrNotExist.
func TestCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "checkpoint.json")
	if _, err := ReadCheckpoint(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadCheckpoint of no file = %v, want fs.ErrNotExist", err)
	}
	cp := NewCheckpoint(time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC))
	cp.Add(event("a", cp.Before.Add(2*time.Minute)))
	if err := cp.Write(file); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpoint(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp, got); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v, want the checkpoint alone", entries)
	}
	if err := os.WriteFile(file, []byte(`{"delivered":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoint(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("ReadCheckpoint of a checkpoint without its time = %v, want an error naming the file", err)
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	for _, s := range []string{
		`{"before":"2026-11-27T10:59:00Z","delivered":{"nqv-L_piFITDQ0R0q-ywGg":"2026-11-27T11:00:00.278Z"}}`,
		`{"before":"2026-11-27T10:59:00+01:00","delivered":{}}`, `{}`, `{"before":""}`, `{"before":"2026-11-27T10:59:00Z","delivered":{"":"2026-11-27T10:59:00Z"}}`,
		`{"before":"2026-11-27T10:59:00Z","delivered":{"a":"0001-01-01T00:00:00Z"}}`, `null`, ``, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cp, err := parseCheckpoint(b)
		if err != nil {
			return
		}
		if cp.Before.IsZero() {
			t.Fatalf("parseCheckpoint(%q) = %v, with no time", b, cp)
		}
		written, err := json.Marshal(cp) // as Write writes it
		if err != nil {
			t.Fatalf("parseCheckpoint(%q) = %v, which cannot be written: %v", b, cp, err)
		}
		again, err := parseCheckpoint(written)
		if err != nil {
			t.Fatalf("parseCheckpoint(%q) = %v, written %s, which cannot be read back: %v", b, cp, written, err)
		}
		if diff := cmp.Diff(cp, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("parseCheckpoint(%q) does not read back as written (-first +again):\n%s", b, diff)
		}
	})
}
