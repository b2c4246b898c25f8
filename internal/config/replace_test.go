package config_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
)

// A replacement of the document is decided with no store: its
// preconditions, a document stored already, and otherwise what to write
// over what was read.
func TestReplace(t *testing.T) {
	d, err := config.Parse([]byte(`{"shop": {"name": "Quire Books"}}`))
	if err != nil {
		t.Fatal(err)
	}
	other := config.Head{Hash: "other", Size: 10, Generation: "g1", Chunks: 2}
	same := config.Head{Hash: d.Hash, Size: d.Size, Generation: "g1", Chunks: 1}
	for _, tc := range []struct {
		name  string
		read  *config.Head
		pre   quire.Precondition
		code  string
		write bool
		want  config.Replacement
	}{
		{name: "a first document", write: true, want: config.Replacement{Created: true}},
		{name: "a first document, create-only", pre: quire.Precondition{Absent: true}, write: true, want: config.Replacement{Created: true}},
		{name: "over another", read: &other, write: true, want: config.Replacement{Read: other}},
		{name: "over the one read", read: &other, pre: quire.Precondition{Match: []string{"other"}}, write: true, want: config.Replacement{Read: other}},
		{name: "over a changed one", read: &other, pre: quire.Precondition{Match: []string{"older"}}, code: quire.EPRECONDITION},
		{name: "create-only over one", read: &other, pre: quire.Precondition{Absent: true}, code: quire.EPRECONDITION},
		{name: "If-Match: * over none", pre: quire.Precondition{Exists: true}, code: quire.EPRECONDITION},
		{name: "the same document", read: &same},
		{name: "the same document, create-only", read: &same, pre: quire.Precondition{Absent: true}, code: quire.EPRECONDITION},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
			rep, write, err := config.Replace(tc.read, d, tc.pre, "g2", `"etag"`, now)
			if quire.ErrorCode(err) != tc.code || write != tc.write {
				t.Fatalf("= write %v, %v; want write %v, code %q", write, err, tc.write, tc.code)
			}
			if !write {
				return
			}
			want := tc.want
			want.Document, want.Generation = d, "g2"
			want.Document.Generation = "g2"
			ev := quire.NewEvent(quire.EventConfigChanged, "/config", d.Hash, now, config.Changed{ETag: `"etag"`, Size: d.Size})
			want.Event = &ev
			if diff := cmp.Diff(want, rep); diff != "" {
				t.Errorf("replacement (-want +got):\n%s", diff)
			}
		})
	}
}
