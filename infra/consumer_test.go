package main

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/quire"
)

// consumerRule is how a system of its own subscribes to Quire's events, as
// docs/events.md shows it (the lines between the markers): a rule on the
// stage's bus, whose target, here a queue, has its own retry policy and
// dead-letter queue. It takes version 1 of order.placed, from the stage
// whose stack is quireStack.
func consumerRule(stack awscdk.Stack, quireStack string, orders awssqs.IQueue) {
	// consumer: start
	bus := awsevents.EventBus_FromEventBusName(stack, jsii.String("QuireEvents"), jsii.String(quireStack+"-events"))
	deadLetters := awssqs.NewQueue(stack, jsii.String("OrderPlacedDeadLetters"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	rule := awsevents.NewRule(stack, jsii.String("OnOrderPlaced"), &awsevents.RuleProps{
		EventBus: bus,
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("urn:quire:" + quireStack),
			DetailType: jsii.Strings("order.placed"),
			Detail:     &map[string]any{"dataschema": []any{"urn:quire:events:order.placed:v1"}}, // the version it reads
		},
	})
	rule.AddTarget(awseventstargets.NewSqsQueue(orders, &awseventstargets.SqsQueueProps{
		RetryAttempts:   jsii.Number(185),                       // EventBridge's most
		MaxEventAge:     awscdk.Duration_Hours(jsii.Number(24)), // its longest
		DeadLetterQueue: deadLetters,                            // what outlasts both, kept 14 days
	}))
	// consumer: end
}

// TestConsumerRule: the consumer's rule docs/events.md shows synthesizes to
// a rule on the stage's bus for version 1 of order.placed from the stage's
// source, whose target retries and
// then hands the event to its dead-letter queue; and the page shows it as
// it is here.
func TestConsumerRule(t *testing.T) {
	needsNode(t)
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Consumer"), nil)
	consumerRule(stack, "Quire-prod", awssqs.NewQueue(stack, jsii.String("Orders"), nil))
	tmpl := assertions.Template_FromStack(stack, nil)
	tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), &map[string]any{
		"EventBusName": "Quire-prod-events",
		"EventPattern": map[string]any{
			"source": []any{quire.EventSource("Quire-prod")}, "detail-type": []any{quire.EventOrderPlaced},
			"detail": map[string]any{"dataschema": []any{quire.EventSchema(quire.EventOrderPlaced, 1)}},
		},
		"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
			"RetryPolicy":      map[string]any{"MaximumRetryAttempts": 185, "MaximumEventAgeInSeconds": 86400},
			"DeadLetterConfig": assertions.Match_ObjectLike(&map[string]any{"Arn": assertions.Match_AnyValue()}),
		})},
	})
	src, err := os.ReadFile("consumer_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "\t// consumer: start\n")
	snippet, _, _ := strings.Cut(rest, "\t// consumer: end\n")
	page, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for line := range strings.Lines(snippet) {
		shown = append(shown, strings.TrimPrefix(line, "\t"))
	}
	if want := "```go\n" + strings.Join(shown, "") + "```\n"; !strings.Contains(string(page), want) {
		t.Errorf("docs/events.md does not show the consumer's rule as infra/consumer_test.go has it:\n%s", want)
	}
}
