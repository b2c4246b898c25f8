package openapi_test

import (
	"testing"

	"github.com/quireapi/quire/shared/openapi"
	"github.com/quireapi/quire/shared/service/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// TestServed: GET /openapi.json is public and answers the document.
func TestServed(t *testing.T) {
	api := servicetest.New(t)
	want, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	r := api.Do(t, "GET", "/openapi.json", "")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Body != string(want) {
		t.Errorf("GET /openapi.json = %d %s, %d bytes; want the document's %d", r.StatusCode, r.Header.Get("Content-Type"), len(r.Body), len(want))
	}
	if r.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
}
