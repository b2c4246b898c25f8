package openapi_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/quireapi/quire/internal/openapi"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// TestServed: each version's document is public under the version's
// prefix, and the newest version's without one.
func TestServed(t *testing.T) {
	api := servicetest.New(t)
	newest := routes.Versions[len(routes.Versions)-1]
	paths := map[string]int{routes.DocumentPath: newest}
	for _, v := range routes.Versions {
		paths[routes.VersionPrefix(v)+routes.DocumentPath] = v
	}
	for path, v := range paths {
		want, err := openapi.DocumentAt(path)
		if err != nil {
			t.Fatal(err)
		}
		r := api.Do(t, "GET", path, "")
		var doc struct{ Info struct{ Version string } }
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Body != string(want) ||
			json.Unmarshal([]byte(r.Body), &doc) != nil || doc.Info.Version != strconv.Itoa(v) {
			t.Errorf("GET %s = %d %s, %d bytes; want version %d's document, %d", path, r.StatusCode, r.Header.Get("Content-Type"), len(r.Body), v, len(want))
		}
		if r.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Errorf("GET %s: Cache-Control %q", path, r.Header.Get("Cache-Control"))
		}
	}
}
