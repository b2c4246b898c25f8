package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the document the code builds")

// The OpenAPI document is the contract clients are generated from: a change
// to it shows in review as a change of testdata/openapi.json. After a
// change the code means, `go test ./shared/openapi -run Golden -update`
// rewrites the file.
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
	golden := filepath.Join("testdata", "openapi.json")
	if *update {
		if err := os.WriteFile(golden, indented.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./shared/openapi -run Golden -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), indented.String()); diff != "" {
		t.Errorf("the OpenAPI document differs from %s (-want +got); if the change is meant, run go test ./shared/openapi -run Golden -update:\n%s", golden, diff)
	}
}
