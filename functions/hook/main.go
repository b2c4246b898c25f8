// Command hook is CodeDeploy's BeforeAllowTraffic hook of every function:
// before a deployment shifts any traffic, it invokes the new version with
// the read-only checks of its group and reports to CodeDeploy (see
// pretraffic.Hook). It serves no route and reads no table itself.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/quireapi/quire/internal/pretraffic"
)

func main() {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	h, err := pretraffic.HookFromEnv(os.Getenv)
	if err != nil {
		slog.Error("init failed", "err", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
