// Command events is the enrichment of the stage's events pipe: it shapes
// each new item of the outbox table's stream into its event (see
// outbox.Shaper), from the source EVENT_SOURCE names, which the pipe puts
// on the event bus. It reads no table and calls no AWS service.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/quireapi/quire/internal/outbox"
)

func main() {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	source := os.Getenv("EVENT_SOURCE")
	if source == "" {
		slog.Error("EVENT_SOURCE is not set: the stack sets it to its events' source")
		os.Exit(1)
	}
	lambda.Start(outbox.Shaper(source))
}
