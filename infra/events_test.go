package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestEventsPipe: the events pipe reads the outbox table's stream, new
// items alone, has the events function shape them, and puts each on the
// stage's bus, its detail-type the event's type and its source the
// stack's, which the function sets in the event too; what it gives up goes to
// its dead-letter queue. Its role may do that and nothing else; the bus's
// name and ARN, and the queue, are outputs.
func TestEventsPipe(t *testing.T) {
	needsNode(t)
	s := synthesized(t)
	res := resourcesOf(t, s.main)
	pipe := single(t, res, "AWS::Pipes::Pipe").Properties
	table, bus, queue, fn := "", "", "", "EventsFunction"
	for id := range ofType(res, "AWS::DynamoDB::Table") {
		if strings.HasPrefix(id, "EventsTable") {
			table = id
		}
	}
	for id := range ofType(res, "AWS::Events::EventBus") {
		bus = id
	}
	for id := range ofType(res, "AWS::SQS::Queue") {
		queue = id
	}
	if table == "" || ref(pipe["Source"]) != table || !strings.Contains(jsonOf(pipe["Source"]), "StreamArn") {
		t.Errorf("the pipe reads %s, want the stream of %s", jsonOf(pipe["Source"]), table)
	}
	for _, want := range []string{
		`"FilterCriteria":{"Filters":[{"Pattern":"{\"eventName\":[\"INSERT\"]}"}]}`,
		`"DeadLetterConfig":{"Arn":{"Fn::GetAtt":["` + queue + `","Arn"]}}`,
		`"StartingPosition":"TRIM_HORIZON"`,
	} {
		if !strings.Contains(jsonOf(pipe["SourceParameters"]), want) {
			t.Errorf("the pipe's source parameters %s lack %s", jsonOf(pipe["SourceParameters"]), want)
		}
	}
	if got := jsonOf(pipe["Enrichment"]); got != `{"Fn::GetAtt":["`+fn+`","Arn"]}` {
		t.Errorf("the pipe's enrichment is %s, want the events function", got)
	}
	if got := jsonOf(res[fn].Properties["Environment"]); got != `{"Variables":{"EVENT_SOURCE":"urn:quire:Quire"}}` {
		t.Errorf("the events function's environment is %s, want EVENT_SOURCE urn:quire:Quire", got)
	}
	if got := jsonOf(pipe["Target"]); got != `{"Fn::GetAtt":["`+bus+`","Arn"]}` {
		t.Errorf("the pipe's target is %s, want the bus", got)
	}
	if got := jsonOf(pipe["TargetParameters"]); got != `{"EventBridgeEventBusParameters":{"DetailType":"$.type","Source":"urn:quire:Quire","Time":"$.time"}}` {
		t.Errorf("the pipe's target parameters %s", got)
	}
	role := ref(pipe["RoleArn"])
	var actions []string
	for _, p := range ofType(res, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(p.Properties["Roles"].([]any), func(r any) bool { return ref(r) == role }) {
			continue
		}
		for _, st := range p.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := st.(map[string]any)
			for _, a := range asList(s["Action"]) {
				actions = append(actions, a.(string)+" on "+jsonOf(s["Resource"]))
			}
		}
	}
	slices.Sort(actions)
	want := []string{
		`dynamodb:DescribeStream on {"Fn::GetAtt":["` + table + `","StreamArn"]}`,
		`dynamodb:GetRecords on {"Fn::GetAtt":["` + table + `","StreamArn"]}`,
		`dynamodb:GetShardIterator on {"Fn::GetAtt":["` + table + `","StreamArn"]}`,
		`dynamodb:ListStreams on "*"`,
		`events:PutEvents on {"Fn::GetAtt":["` + bus + `","Arn"]}`,
		`lambda:InvokeFunction on {"Fn::GetAtt":["` + fn + `","Arn"]}`,
	}
	for _, a := range []string{"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"} {
		want = append(want, a+` on {"Fn::GetAtt":["`+queue+`","Arn"]}`)
	}
	slices.Sort(want)
	if !slices.Equal(actions, want) {
		t.Errorf("the pipe's role may do\n%s\nwant\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
	}
	for _, name := range []string{"EventBusName", "EventBusArn", "EventsDeadLetterQueueUrl"} {
		s.main.HasOutput(jsii.String(name), map[string]any{})
	}
}

// TestEventsArchive: the bus keeps every event Quire puts on it for
// archiveRetentionDays, in an archive named after the stack, from which a
// replay (docs/operating.md) puts a time window's events on the bus again.
func TestEventsArchive(t *testing.T) {
	needsNode(t)
	res := resourcesOf(t, synthesized(t).main)
	archive := single(t, res, "AWS::Events::Archive").Properties
	bus := ""
	for id := range ofType(res, "AWS::Events::EventBus") {
		bus = id
	}
	if got := jsonOf(archive["SourceArn"]); got != `{"Fn::GetAtt":["`+bus+`","Arn"]}` {
		t.Errorf("the archive keeps the events of %s, want the bus %s", got, bus)
	}
	if got := jsonOf(archive["EventPattern"]); got != `{"source":["urn:quire:Quire"]}` {
		t.Errorf("the archive keeps %s, want every event of the stack's source, urn:quire:Quire", got)
	}
	if got := archive["RetentionDays"]; got != float64(archiveRetentionDays) {
		t.Errorf("the archive keeps events %v days, want %d", got, archiveRetentionDays)
	}
	if !strings.HasSuffix(jsonOf(archive["ArchiveName"]), `-events"`) {
		t.Errorf("the archive is named %s, want <stack>-events", jsonOf(archive["ArchiveName"]))
	}
}
