package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"

	"github.com/quireapi/quire/internal/testing/quiretest"
)

// The synthesized templates, with the default context, are what a
// deployment changes: a change to either shows in review as a change of its
// file in testdata/, which `go test ./infra -run Golden -update` rewrites.
func TestGoldenTemplates(t *testing.T) {
	needsNode(t)
	s := synthesized(t)
	templates := map[string]assertions.Template{
		"Quire.template.json":                  s.main,
		"QuireOperations.nested.template.json": s.ops,
	}
	for name, tmpl := range s.routes {
		templates["Quire"+name+".nested.template.json"] = tmpl
	}
	for name, tmpl := range templates {
		got, err := json.MarshalIndent(tmpl.ToJSON(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		quiretest.Golden(t, filepath.Join("testdata", name), append(got, '\n'))
	}
}
