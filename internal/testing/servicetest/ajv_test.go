package servicetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestAjv: ajv, as a client runs it, takes an event the API publishes,
// with every balance from 0.00 to 99.99, and refuses one without its data;
// and it refuses 34.48 as a multiple of 0.01, which is why no amount of
// the documents says multipleOf.
func TestAjv(t *testing.T) {
	if why := ajvMissing(); why != "" {
		t.Skipf("answers and events are checked with kin-openapi alone: %s (make test runs ajv too)", why)
	}
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	if c.ajv == nil {
		t.Fatal("ajv is installed, and the checker does not run it")
	}
	funded := `{"specversion":"1.0","id":"nqv-L_piFITDQ0R0q-ywGg","source":"urn:quire:Quire","type":"user.funded",` +
		`"subject":"/users/2","time":"2026-11-27T11:43:21.278Z","datacontenttype":"application/json",` +
		`"dataschema":"urn:quire:events:user.funded:v1","data":{"user_id":2,"amount":34.48,"balance":60.07}}`
	if err := CheckEvent([]byte(funded)); err != nil {
		t.Errorf("a user.funded event: %v", err)
	}
	schemas, err := EventSchemas()
	if err != nil {
		t.Fatal(err)
	}
	schema := schemas["urn:quire:events:user.funded:v1"]
	for cents := range 10000 {
		ev := strings.Replace(funded, "60.07", fmt.Sprintf("%d.%02d", cents/100, cents%100), 1)
		if err := c.ajv.check(schema, []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ajv.check(schema, []byte(strings.Replace(funded, `,"data":{"user_id":2,"amount":34.48,"balance":60.07}`, "", 1))); err == nil ||
		!strings.Contains(err.Error(), "must have required property 'data'") {
		t.Errorf("ajv on an event without its data: %v", err)
	}
	multiple := &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"number"}, MultipleOf: openapi3.Ptr(0.01)}}
	if err := c.ajv.check(multiple, []byte("34.48")); err == nil {
		t.Error("ajv takes 34.48 as a multiple of 0.01: the documents could say multipleOf")
	}
}
