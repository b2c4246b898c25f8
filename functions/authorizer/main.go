// Command authorizer is the Lambda REQUEST authorizer of every protected
// route: it verifies bearer tokens against the public keys in JWKS. It links
// no DynamoDB client, nor any other group's code: each package linked is
// init time on every cold start.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/quireapi/quire/internal/authorizer"
)

func main() {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	a, err := authorizer.AuthorizerFromEnv(os.Getenv)
	if err != nil {
		slog.Error("init failed", "err", err)
		os.Exit(1)
	}
	lambda.Start(a.Handle)
}
