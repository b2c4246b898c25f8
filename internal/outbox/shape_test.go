package outbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/quireapi/quire/internal/outbox"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestPipeBatch replays the sample batch of the events pipe
// (events/events/pipe-batch.json, as `sam local invoke EventsFunction`
// takes it) through the events function's handler, as Lambda invokes it:
// each new outbox item becomes its event, in order, from the stack's
// source, each one as the documents' webhook describes it (the second was
// written before events named their version, which was 1); an item
// without its event fails the batch, which the pipe then retries.
func TestPipeBatch(t *testing.T) {
	batch, err := os.ReadFile(filepath.Join("..", "..", "events", "events", "pipe-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := lambda.NewHandler(outbox.Shaper("urn:quire:Quire-prod"))
	out, err := h.Invoke(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var events []json.RawMessage
	if err := json.Unmarshal(out, &events); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		if err := servicetest.CheckEvent(ev); err != nil {
			t.Error(err)
		}
		var e struct{ Type, Source, DataSchema string }
		_ = json.Unmarshal(ev, &e)
		types = append(types, e.Type)
		if e.Source != "urn:quire:Quire-prod" || e.DataSchema != "urn:quire:events:"+e.Type+":v1" {
			t.Errorf("shaped %s: want its source urn:quire:Quire-prod and its dataschema version 1", ev)
		}
	}
	if strings.Join(types, " ") != "order.placed user.funded" {
		t.Errorf("shaped %s, want order.placed then user.funded", out)
	}
	broken := strings.Replace(string(batch), `"event": {`, `"other": {`, 1)
	if _, err := h.Invoke(context.Background(), []byte(broken)); err == nil {
		t.Error("a batch with an item without its event was shaped")
	}
}
