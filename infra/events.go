package main

import (
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awspipes"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/quire"
)

// eventsName names the events function, the pipe's enrichment.
const eventsName = "events"

// Pipe limits: a batch of stream records it hands the events function
// at once, how long it gathers one, and when it gives a batch up to its
// dead-letter queue: after so many retries, or when its oldest record is
// so old (the stream keeps records 24 hours).
const (
	pipeBatch            = 10
	pipeBatchWindow      = 1 // second
	pipeRetries          = 10
	pipeMaxRecordAge     = 6 * 60 * 60 // seconds
	deadLetterRetention  = 14          // days, SQS's longest
	eventsFunctionMemory = 128
	archiveRetentionDays = 90 // how long the bus's archive keeps each event
)

// newEvents defines how the events the stores write into the outbox table
// (outbox, with a stream of new images) leave the stack: the stage's event
// bus, and a pipe that reads the table's new items, has the events
// function shape each into its event (outbox.Shape, which EventBridge
// Pipes' templates cannot: an item holds its event as a string of JSON,
// and a template would put it on the bus as a string), and puts each on
// the bus, its detail-type the event's type and its source the event's,
// the stack's (quire.EventSource). A
// batch the pipe cannot deliver after its retries goes to the dead-letter
// queue it returns, whose alarm the operations stack defines. The bus's
// name and ARN are outputs.
func newEvents(stack awscdk.Stack, outbox awsdynamodb.Table, assetDir string) (deadLetters awssqs.Queue) {
	source := quire.EventSource(*stack.StackName())
	bus := awsevents.NewEventBus(stack, jsii.String("EventBus"), &awsevents.EventBusProps{
		EventBusName: jsii.String(*stack.StackName() + "-events"),
		Description:  jsii.String("Quire's events: what happened in the shop, published as it committed"),
	})
	// Every event Quire puts on the bus is kept archiveRetentionDays, so
	// that a consumer that lost some asks for a replay of a time window
	// (docs/operating.md), from its own rule's point of view.
	bus.Archive(jsii.String("EventsArchive"), &awsevents.BaseArchiveProps{
		ArchiveName:  jsii.String(*stack.StackName() + "-events"),
		Description:  jsii.String("Every event Quire put on the bus, for replays"),
		EventPattern: &awsevents.EventPattern{Source: jsii.Strings(source)},
		Retention:    awscdk.Duration_Days(jsii.Number(archiveRetentionDays)),
	})
	deadLetters = awssqs.NewQueue(stack, jsii.String("EventsDeadLetters"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(deadLetterRetention)),
	})
	for _, f := range []finding{findingDeadLetterQueue, findingQueueRedrive} {
		suppress(deadLetters, f, "It is the events pipe's dead-letter queue: what it holds is replayed by hand "+
			"(docs/operating.md), never redriven into another queue.")
	}
	fn := newLambda(stack, eventsName, "Shapes each new item of the outbox table into its event, for the events pipe",
		eventsFunctionMemory, map[string]*string{"EVENT_SOURCE": &source}, filepath.Join(assetDir, eventsName))

	role := awsiam.NewRole(stack, jsii.String("EventsPipeRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("pipes.amazonaws.com"), nil),
		Description: jsii.String("The events pipe: reads the outbox's stream, invokes the events function, puts events on the bus"),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
		Resources: jsii.Strings(*outbox.TableStreamArn()),
	}))
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("dynamodb:ListStreams"), Resources: jsii.Strings("*"),
	}))
	suppress(role, findingListStreams, "dynamodb:ListStreams has no resource-level permissions; the pipe reads "+
		"the outbox's stream alone.")
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{fn.FunctionArn()},
	}))
	bus.GrantPutEventsTo(role, nil)
	deadLetters.GrantSendMessages(role)

	awspipes.NewCfnPipe(stack, jsii.String("EventsPipe"), &awspipes.CfnPipeProps{
		Description: jsii.String("Quire's events: the outbox table's new items, shaped by the events function, onto the bus"),
		RoleArn:     role.RoleArn(),
		Source:      outbox.TableStreamArn(),
		SourceParameters: &awspipes.CfnPipe_PipeSourceParametersProperty{
			FilterCriteria: &awspipes.CfnPipe_FilterCriteriaProperty{Filters: &[]any{
				&awspipes.CfnPipe_FilterProperty{Pattern: jsii.String(`{"eventName":["INSERT"]}`)}, // not an event expiring
			}},
			DynamoDbStreamParameters: &awspipes.CfnPipe_PipeSourceDynamoDBStreamParametersProperty{
				StartingPosition:               jsii.String("TRIM_HORIZON"),
				BatchSize:                      jsii.Number(pipeBatch),
				MaximumBatchingWindowInSeconds: jsii.Number(pipeBatchWindow),
				MaximumRetryAttempts:           jsii.Number(pipeRetries),
				MaximumRecordAgeInSeconds:      jsii.Number(pipeMaxRecordAge),
				OnPartialBatchItemFailure:      jsii.String("AUTOMATIC_BISECT"),
				DeadLetterConfig:               &awspipes.CfnPipe_DeadLetterConfigProperty{Arn: deadLetters.QueueArn()},
			},
		},
		Enrichment: fn.FunctionArn(),
		Target:     bus.EventBusArn(),
		TargetParameters: &awspipes.CfnPipe_PipeTargetParametersProperty{
			EventBridgeEventBusParameters: &awspipes.CfnPipe_PipeTargetEventBridgeEventBusParametersProperty{
				Source: &source, DetailType: jsii.String("$.type"), Time: jsii.String("$.time"),
			},
		},
	}).Node().AddDependency(role)

	output(stack, "EventBusName", "The event bus of this stage's events: a rule on it matches the stack's source, urn:quire:<stack>, and a detail-type", bus.EventBusName())
	output(stack, "EventBusArn", "The ARN of the event bus of this stage's events", bus.EventBusArn())
	output(stack, "EventsDeadLetterQueueUrl", "The queue of the events the pipe could not deliver (docs/operating.md says how to replay them)", deadLetters.QueueUrl())
	return deadLetters
}

// deadLetterAlarm goes off as soon as the events pipe has given up a batch.
func deadLetterAlarm(q awssqs.Queue) alarmSpec {
	return alarmSpec{
		id: "events-dead-letters", threshold: 1, of: 1, in: 1,
		metric: q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: minute(), Statistic: jsii.String("Maximum")}),
		check: "The events pipe gave up events it could not put on the bus (the bus refused them, or the events function " +
			"failed): they are in the dead-letter queue, EventsDeadLetterQueueUrl. Fix the cause (the events function's " +
			"log group, the pipe's metrics), then replay them as docs/operating.md says.",
	}
}
