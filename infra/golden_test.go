package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the templates in testdata/ from the stack the code defines")

// The synthesized templates, with the default context, are what a
// deployment changes: a change to either shows in review as a change of its
// file in testdata/. After a change the code means, `go test ./infra -run
// Golden -update` rewrites them.
func TestGoldenTemplates(t *testing.T) {
	s := synthesized(t)
	for name, tmpl := range map[string]assertions.Template{
		"Quire.template.json":                  s.main,
		"QuireOperations.nested.template.json": s.ops,
	} {
		got, err := json.MarshalIndent(tmpl.ToJSON(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		golden := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test ./infra -run Golden -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s differs (-want +got); if the change is meant, run go test ./infra -run Golden -update:\n%s", golden, diff)
		}
	}
}
