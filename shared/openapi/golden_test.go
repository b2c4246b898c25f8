package openapi

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/quireapi/quire/shared/quire/quiretest"
)

// The OpenAPI document is the contract clients are generated from: a change
// to it shows in review as a change of testdata/openapi.json, which
// `go test ./shared/openapi -run Golden -update` rewrites.
func TestGoldenDocument(t *testing.T) {
	doc, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	indented.WriteByte('\n')
	quiretest.Golden(t, filepath.Join("testdata", "openapi.json"), indented.Bytes())
}
