package catalog_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// TestLanding: the landing page is public and lists the featured books in
// rank order, with exact prices and their authors' names.
func TestLanding(t *testing.T) {
	api := servicetest.New(t)
	if r := api.Do(t, "GET", "/landing", ""); r.StatusCode != 200 || r.Body != `{"featured":[]}` {
		t.Errorf("empty catalog: %d %s", r.StatusCode, r.Body)
	}
	api.SeedCatalog(t)
	r := api.Do(t, "GET", "/landing", "")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "public, max-age=60" {
		t.Fatalf("GET /landing = %d %s %q %s", r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"), r.Body)
	}
	var got struct {
		Featured []map[string]any `json:"featured"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	links := func(id, author string) []any {
		return []any{
			map[string]any{"rel": "buy", "href": "/products/" + id + "/buy"},
			map[string]any{"rel": "author", "href": "/authors/" + author},
		}
	}
	want := []map[string]any{
		{"id": json.Number("1"), "name": "Frankenstein", "price": json.Number("12.99"), "status": "AVAILABLE", "author_id": json.Number("1"), "author_name": "Mary Shelley", "links": links("1", "1")},
		{"id": json.Number("3"), "name": "Pride and Prejudice", "price": json.Number("9.99"), "status": "AVAILABLE", "author_id": json.Number("2"), "author_name": "Jane Austen", "links": links("3", "2")},
		{"id": json.Number("5"), "name": "Moby-Dick", "price": json.Number("14.50"), "status": "AVAILABLE", "author_id": json.Number("3"), "author_name": "Herman Melville", "links": links("5", "3")},
	}
	if diff := cmp.Diff(want, got.Featured); diff != "" {
		t.Errorf("featured (-want +got):\n%s", diff)
	}
	if r := api.Do(t, "POST", "/landing", "{}"); r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST /landing = %d Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
}
