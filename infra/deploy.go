package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscodedeploy"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/quireapi/quire/internal/pretraffic"
)

// contextDeployment names how CodeDeploy shifts a function's traffic to a
// new version: one of deploymentConfigs' names.
const contextDeployment = "quire:deployment"

// defaultDeployment sends a tenth of the traffic to the new version for
// five minutes, then the rest, unless an alarm goes off first.
const defaultDeployment = "Canary10Percent5Minutes"

// deploymentConfigs are CodeDeploy's predefined configurations for Lambda,
// by the name that follows "CodeDeployDefault.Lambda". AllAtOnce suits a
// development stack.
var deploymentConfigs = map[string]func() awscodedeploy.ILambdaDeploymentConfig{
	"AllAtOnce":                     awscodedeploy.LambdaDeploymentConfig_ALL_AT_ONCE,
	"Canary10Percent5Minutes":       awscodedeploy.LambdaDeploymentConfig_CANARY_10PERCENT_5MINUTES,
	"Canary10Percent10Minutes":      awscodedeploy.LambdaDeploymentConfig_CANARY_10PERCENT_10MINUTES,
	"Canary10Percent15Minutes":      awscodedeploy.LambdaDeploymentConfig_CANARY_10PERCENT_15MINUTES,
	"Canary10Percent30Minutes":      awscodedeploy.LambdaDeploymentConfig_CANARY_10PERCENT_30MINUTES,
	"Linear10PercentEvery1Minute":   awscodedeploy.LambdaDeploymentConfig_LINEAR_10PERCENT_EVERY_1MINUTE,
	"Linear10PercentEvery2Minutes":  awscodedeploy.LambdaDeploymentConfig_LINEAR_10PERCENT_EVERY_2MINUTES,
	"Linear10PercentEvery3Minutes":  awscodedeploy.LambdaDeploymentConfig_LINEAR_10PERCENT_EVERY_3MINUTES,
	"Linear10PercentEvery10Minutes": awscodedeploy.LambdaDeploymentConfig_LINEAR_10PERCENT_EVERY_10MINUTES,
}

// deploymentConfig returns the configuration the CDK context names, or the
// default. It panics (failing the synth) on a name it does not know.
func deploymentConfig(stack awscdk.Stack) awscodedeploy.ILambdaDeploymentConfig {
	name := stagePreset(stack).deployment
	if v := stack.Node().TryGetContext(jsii.String(contextDeployment)); v != nil {
		name = fmt.Sprint(v)
	}
	c, ok := deploymentConfigs[name]
	if !ok {
		var names []string
		for n := range deploymentConfigs {
			names = append(names, n)
		}
		sort.Strings(names)
		panic(fmt.Sprintf("context %s = %v: want one of %v", contextDeployment, name, names))
	}
	return c()
}

// liveAlias is the alias through which callers reach a function: API
// Gateway's integrations and the authorizer invoke it, never the function's
// $LATEST, so that CodeDeploy can move it from one version to the next.
const liveAlias = "live"

// newAlias publishes fn's current code and configuration as a version and
// points the alias live at it.
func newAlias(stack awscdk.Stack, name string, fn awslambda.Function) awslambda.Alias {
	return awslambda.NewAlias(stack, jsii.String(exportName(name)+"Live"), &awslambda.AliasProps{
		AliasName: jsii.String(liveAlias),
		Version:   fn.CurrentVersion(),
	})
}

// hookName names the pre-traffic hook's function.
const hookName = "hook"

// hookTimeout bounds one run of the hook: a cold start and a few requests
// of the new version, well inside it.
const hookTimeout = 60

// newDeployments defines a CodeDeploy deployment group per alias, named
// after its group, all in one application with one role: a deployment that
// changes a function first runs the pre-traffic hook (see newHook), then
// shifts its alias to the new version as config says, and rolls back when
// the hook fails, when one of the function's alarms (see alarms.rollback)
// goes off, or when the deployment fails or is stopped.
func newDeployments(stack awscdk.Stack, aliases map[string]awslambda.Alias, config awscodedeploy.ILambdaDeploymentConfig, alarms *alarms, assetDir string) {
	app := awscodedeploy.NewLambdaApplication(stack, jsii.String("Deployments"), nil)
	role := awsiam.NewRole(stack, jsii.String("DeploymentRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("codedeploy.amazonaws.com"), nil),
		ManagedPolicies: &[]awsiam.IManagedPolicy{
			awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("service-role/AWSCodeDeployRoleForLambdaLimited")),
		},
	})
	suppress(role, findingDeployPolicy, "AWS's least-privilege policy for CodeDeploy's Lambda deployments: it "+
		"reads the alarms and moves aliases; the stack grants it the pre-traffic hook alone besides.")
	hook := newHook(stack, aliases, assetDir)
	var groups []*string
	for _, name := range sortedKeys(aliases) {
		var rollback []interfacesawscloudwatch.IAlarmRef
		for _, a := range alarms.rollback(name) {
			rollback = append(rollback, a)
		}
		group := awscodedeploy.NewLambdaDeploymentGroup(stack, jsii.String(exportName(name)+"Deployment"), &awscodedeploy.LambdaDeploymentGroupProps{
			Application: app,
			// The hook learns the group from the deployment, by this name.
			DeploymentGroupName: jsii.String(name),
			Role:                role,
			Alias:               aliases[name],
			DeploymentConfig:    config,
			PreHook:             hook,
			Alarms:              &rollback,
			AutoRollback: &awscodedeploy.AutoRollbackConfig{
				DeploymentInAlarm: jsii.Bool(true), FailedDeployment: jsii.Bool(true), StoppedDeployment: jsii.Bool(true),
			},
		})
		groups = append(groups, group.DeploymentGroupArn())
	}
	// The hook reads the groups' deployments, and reports on them
	// (PreHook's grant).
	hook.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(pretraffic.Actions["GetDeployment"]),
		Resources: &groups,
	}))
	// After the groups: PreHook's grant adds the policy this is about.
	suppress(role, findingHookVersions, "CodeDeploy invokes the pre-traffic hook, a function of this stack that "+
		"serves nothing; the grant of its ARN covers its versions too.")
}

// newHook defines the pre-traffic hook (pretraffic.Hook): one function for
// every deployment group, which may invoke the new versions the aliases
// move to, and nothing else of the stack's functions. As an alias's update
// runs the hook, the hook, with the new versions in its environment and its
// policy, is updated first.
func newHook(stack awscdk.Stack, aliases map[string]awslambda.Alias, assetDir string) awslambda.Function {
	versions := map[string]*string{}
	var arns []*string
	for _, name := range sortedKeys(aliases) {
		arn := aliases[name].Version().FunctionArn()
		versions[name] = arn
		arns = append(arns, arn)
	}
	fn := newLambda(stack, hookName, "Checks each new version before CodeDeploy shifts traffic to it", pretraffic.MemoryMB,
		map[string]*string{pretraffic.VersionsEnv: stack.ToJsonString(versions, nil)}, filepath.Join(assetDir, hookName))
	fn.Node().DefaultChild().(awslambda.CfnFunction).SetTimeout(jsii.Number(hookTimeout))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(pretraffic.Actions["Invoke"]),
		Resources: &arns,
	}))
	return fn
}
