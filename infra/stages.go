package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/quire"
)

// CDK context keys of the stage: which one this stack is, and what its
// kind's preset gives that another key does not override.
const (
	// contextStage names the stage: the stack is Quire-<stage> (Quire
	// without one), and so is everything named after the stack: the API,
	// the alarms, the dashboard, the queries, the metrics' namespace and
	// the tokens' issuer.
	contextStage = "quire:stage"
	// contextStageKind is development or production. Without it, the
	// stage's name decides (see kindOfName): only a name that says
	// development is; any other name, and none, is production.
	contextStageKind = "quire:stageKind"
	// contextLogRetention is how many days the logs are kept.
	contextLogRetention = "quire:logRetentionDays"
	// contextRemoval says what deleting the stack does to the tables:
	// retain (with deletion protection) or destroy.
	contextRemoval = "quire:removal"
	// contextTerminationProtection: whether CloudFormation refuses to
	// delete the stack ("true" or "false").
	contextTerminationProtection = "quire:terminationProtection"
)

// stageKind is a kind of stage, which selects a preset.
type stageKind string

const (
	development stageKind = "development"
	production  stageKind = "production"
)

// preset is what a kind of stage sets, each value overridden by its own
// key: the deployment (quire:deployment), the web ACL (quire:waf), the
// logs' retention in days (quire:logRetentionDays), whether the tables
// outlive the stack (quire:removal), and whether CloudFormation refuses to
// delete the stack (quire:terminationProtection). Neither kind mails
// alarms until quire:alarmEmail names an address.
type preset struct {
	deployment            string
	waf                   bool
	logRetention          int
	retain                bool
	terminationProtection bool
}

// presets: a development stack deploys at once, costs no web ACL, keeps
// its logs a week and goes whole with `make destroy`; a production stack
// shifts traffic by the canary, runs the web ACL, keeps its logs a month,
// its tables when it is deleted, and cannot be deleted while termination
// protection is on.
var presets = map[stageKind]preset{
	development: {deployment: "AllAtOnce", waf: false, logRetention: 7, retain: false, terminationProtection: false},
	production:  {deployment: defaultDeployment, waf: true, logRetention: 30, retain: true, terminationProtection: true},
}

// stageNamePattern is a stage's name: lower case letters, digits and
// hyphens, starting with a letter.
var stageNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// stackName returns the name of the stack of the stage the app's context
// names: Quire, or Quire-<stage>. It panics (failing the synth) on a name
// that is not a stage's.
func stackName(app awscdk.App) string {
	v := app.Node().TryGetContext(jsii.String(contextStage))
	if v == nil || fmt.Sprint(v) == "" {
		return quire.Stack
	}
	name := fmt.Sprint(v)
	if !stageNamePattern.MatchString(name) {
		panic(fmt.Sprintf("context %s = %q: want 1 to 20 lower case letters, digits and hyphens, starting with a letter", contextStage, name))
	}
	return quire.Stack + "-" + name
}

// kindOf returns the kind of the stage of scope's context: its
// quire:stageKind, or else the kind its name says (kindOfName).
func kindOf(scope constructs.Construct) stageKind {
	if v := scope.Node().TryGetContext(jsii.String(contextStageKind)); v != nil {
		k := stageKind(fmt.Sprint(v))
		if _, ok := presets[k]; !ok {
			panic(fmt.Sprintf("context %s = %v: want %s or %s", contextStageKind, v, development, production))
		}
		return k
	}
	name := ""
	if v := scope.Node().TryGetContext(jsii.String(contextStage)); v != nil {
		name = fmt.Sprint(v)
	}
	return kindOfName(name)
}

// kindOfName returns the kind a stage's name says, failing safe: only
// dev, development, test, and dev-*, test-* and pr-* (the pull requests'
// stages, .github/workflows/preview.yml) are development; any other name
// (prod-eu, staging, live...), and none, is production, whose tables
// outlive the stack. The Makefile's development-stage target, which
// guards make destroy, has the same rule (DEVELOPMENT_STAGES), and
// TestDestroyRefusesProduction holds the two together.
func kindOfName(name string) stageKind {
	switch {
	case name == "dev", name == "development", name == "test",
		strings.HasPrefix(name, "dev-"), strings.HasPrefix(name, "test-"), strings.HasPrefix(name, "pr-"):
		return development
	}
	return production
}

// stagePreset returns the preset of stack's stage.
func stagePreset(stack awscdk.Stack) preset { return presets[kindOf(stack)] }

// terminationProtection reports whether CloudFormation refuses to delete
// the stack of scope's stage: the context's quire:terminationProtection,
// or the stage's preset. It panics (failing the synth) on a value that is
// not a boolean.
func terminationProtection(scope constructs.Construct) bool {
	return boolContext(scope, contextTerminationProtection, presets[kindOf(scope)].terminationProtection)
}

// retentions are the retentions CloudWatch Logs takes that a stage may
// choose, in days.
var retentions = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 7: awslogs.RetentionDays_ONE_WEEK,
	14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH, 90: awslogs.RetentionDays_THREE_MONTHS,
	180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
}

// logRetention returns how long stack's logs are kept: the context's
// quire:logRetentionDays, or the stage's preset. It panics (failing the
// synth) on a number of days CloudWatch Logs does not take.
func logRetention(stack awscdk.Stack) awslogs.RetentionDays {
	days := stagePreset(stack).logRetention
	if v := stack.Node().TryGetContext(jsii.String(contextLogRetention)); v != nil {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if _, ok := retentions[n]; err != nil || !ok {
			panic(fmt.Sprintf("context %s = %v: want one of 1, 3, 7, 14, 30, 90, 180, 365", contextLogRetention, v))
		}
		days = n
	}
	return retentions[days]
}

// retainTables reports whether stack's tables outlive it: the context's
// quire:removal, or the stage's preset.
func retainTables(stack awscdk.Stack) bool {
	v := stack.Node().TryGetContext(jsii.String(contextRemoval))
	switch fmt.Sprint(v) {
	case "<nil>":
		return stagePreset(stack).retain
	case "retain":
		return true
	case "destroy":
		return false
	}
	panic(fmt.Sprintf("context %s = %v: want retain or destroy", contextRemoval, v))
}
