// Command infra is Quire's AWS CDK app: `cdk synth` and `cdk deploy` run it
// (see cdk.json). It needs no AWS credentials to synthesize; the stack is
// environment-agnostic and takes the functions' bootstraps from build/.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	addChecks(app)
	newStage(app, "build")
	app.Synth(nil)
}

// newStage defines the stack of the stage the app's context names (see
// stackName), with the functions' bootstraps in assetDir.
func newStage(app awscdk.App, assetDir string) awscdk.Stack {
	return NewQuireStack(app, stackName(app), &QuireStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Quire: a serverless REST API for a bookshop"),
			// A production stage cannot be deleted by mistake: its
			// preset turns termination protection on, and
			// quire:terminationProtection says otherwise.
			TerminationProtection: jsii.Bool(terminationProtection(app)),
		},
		AssetDir: assetDir,
	})
}
