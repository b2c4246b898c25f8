// Command events is the enrichment of the stage's events pipe: it shapes
// each new item of the outbox table's stream into its event (see
// outbox.Shape), which the pipe puts on the event bus. It reads no table
// and calls no AWS service.
package main

import (
	"log/slog"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/quireapi/quire/internal/outbox"
)

func main() {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	lambda.Start(outbox.Shape)
}
