package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// addChecks runs cdk-nag's AWS Solutions and Serverless rule packs on every
// stack of app when it synthesizes: a finding neither fixed nor suppressed
// on its resource, with a reason, is an error that fails the synth (and
// `make test`).
func addChecks(app awscdk.App) {
	aspects := awscdk.Aspects_Of(app)
	aspects.Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Reports: jsii.Bool(false)}), nil)
	aspects.Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Reports: jsii.Bool(false)}), nil)
}

// finding is a rule of a pack, narrowed by appliesTo to some of its
// findings (those of IAM4 and IAM5 name a policy or a resource).
type finding struct {
	rule      string
	appliesTo string
}

// The findings Quire does not fix, each for a reason said where it is
// suppressed.
var (
	findingNoCognito       = finding{rule: "AwsSolutions-COG4"}
	findingNoAuthorizer    = finding{rule: "AwsSolutions-APIG4"}
	findingNoValidator     = finding{rule: "AwsSolutions-APIG2"}
	findingNoWAF           = finding{rule: "AwsSolutions-APIG3"}
	findingNoRotation      = finding{rule: "AwsSolutions-SMG4"}
	findingNoDLQ           = finding{rule: "Serverless-LambdaDLQ"}
	findingNoRedrive       = finding{rule: "Serverless-SNSRedrivePolicy"}
	findingTracingOnAny    = finding{rule: "AwsSolutions-IAM5", appliesTo: "Resource::*"}
	findingLambdaLogging   = finding{rule: "AwsSolutions-IAM4", appliesTo: "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}
	findingGatewayLogging  = finding{rule: "AwsSolutions-IAM4", appliesTo: "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"}
	findingDeployPolicy    = finding{rule: "AwsSolutions-IAM4", appliesTo: "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited"}
	findingHookVersions    = finding{rule: "AwsSolutions-IAM5", appliesTo: "Resource::<HookFunction.Arn>:*"}
	findingListStreams     = finding{rule: "AwsSolutions-IAM5", appliesTo: "Resource::*"}
	findingDeadLetterQueue = finding{rule: "AwsSolutions-SQS3"}
	findingQueueRedrive    = finding{rule: "Serverless-SQSRedrivePolicy"}
)

// suppress records on c, and what it contains, why f is not fixed.
func suppress(c constructs.IConstruct, f finding, reason string) {
	s := &cdknag.NagPackSuppression{Id: jsii.String(f.rule), Reason: jsii.String(reason)}
	if f.appliesTo != "" {
		s.AppliesTo = &[]any{f.appliesTo}
	}
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{s}, jsii.Bool(true))
}
