package main

import (
	"fmt"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscodedeploy"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"
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

// newDeployments defines a CodeDeploy deployment group per alias, all in
// one application with one role: a deployment that changes a function
// shifts its alias to the new version as config says, and rolls back when
// one of the function's alarms (see alarms.rollback) goes off, or when the
// deployment fails or is stopped.
func newDeployments(stack awscdk.Stack, aliases map[string]awslambda.Alias, config awscodedeploy.ILambdaDeploymentConfig, alarms *alarms) {
	app := awscodedeploy.NewLambdaApplication(stack, jsii.String("Deployments"), nil)
	role := awsiam.NewRole(stack, jsii.String("DeploymentRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("codedeploy.amazonaws.com"), nil),
		ManagedPolicies: &[]awsiam.IManagedPolicy{
			awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("service-role/AWSCodeDeployRoleForLambdaLimited")),
		},
	})
	suppress(role, findingDeployPolicy, "AWS's least-privilege policy for CodeDeploy's Lambda deployments: it "+
		"reads the alarms, moves aliases and invokes no function but hooks (Quire has none).")
	for _, name := range sortedKeys(aliases) {
		var rollback []interfacesawscloudwatch.IAlarmRef
		for _, a := range alarms.rollback(name) {
			rollback = append(rollback, a)
		}
		awscodedeploy.NewLambdaDeploymentGroup(stack, jsii.String(exportName(name)+"Deployment"), &awscodedeploy.LambdaDeploymentGroupProps{
			Application:      app,
			Role:             role,
			Alias:            aliases[name],
			DeploymentConfig: config,
			Alarms:           &rollback,
			AutoRollback: &awscodedeploy.AutoRollbackConfig{
				DeploymentInAlarm: jsii.Bool(true), FailedDeployment: jsii.Bool(true), StoppedDeployment: jsii.Bool(true),
			},
		})
	}
}
