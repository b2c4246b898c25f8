package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// resourceRef is a Ref in a template's JSON.
var resourceRef = regexp.MustCompile(`"Ref":"([^"]+)"`)

// globalNames are the properties whose value names a resource in the
// account and Region, which two stages must not share.
var globalNames = map[string]bool{"AlarmName": true, "DashboardName": true, "QueryDefinitionName": true, "LogGroupName": true,
	"TopicName": true, "SecretName": true, "TableName": true, "FunctionName": true}

// names returns what a template names in the account and Region that it
// writes itself (a name CloudFormation makes up, a Ref, is unique anyway):
// the global names of its resources, the API's and the web ACL's, and the
// names the functions' environment gives (the metrics' namespace, the
// tokens' issuer), as JSON.
func names(t *testing.T, res map[string]resource) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(where string, v any) {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), `"Fn::GetAtt"`) {
			return // part of a resource's own name
		}
		for _, ref := range resourceRef.FindAllStringSubmatch(string(b), -1) {
			if !strings.HasPrefix(ref[1], "AWS::") {
				return // a resource's, not a pseudo parameter's such as AWS::Region
			}
		}
		out[string(b)] = where
	}
	for id, r := range res {
		for k, v := range r.Properties {
			if globalNames[k] || k == "Name" && (r.Type == "AWS::ApiGateway::RestApi" || r.Type == "AWS::WAFv2::WebACL") {
				add(id+"."+k, v)
			}
		}
		if env, ok := r.Properties["Environment"].(map[string]any); ok {
			vars, _ := env["Variables"].(map[string]any)
			for _, k := range []string{"METRICS_NAMESPACE", "TOKEN_ISSUER"} {
				if v, ok := vars[k]; ok {
					add(id+"."+k, v)
				}
			}
		}
	}
	return out
}

// TestStagesSideBySide: two stages are two stacks, Quire-dev and
// Quire-prod, with no name in common.
func TestStagesSideBySide(t *testing.T) {
	needsNode(t)
	all := map[string]map[string]string{}
	for _, stage := range []string{"dev", "prod"} {
		s, err := synthStacks(map[string]any{contextStage: stage})
		if err != nil {
			t.Fatal(err)
		}
		got := names(t, resourcesOf(t, s.main))
		for k, v := range names(t, resourcesOf(t, s.ops)) {
			got[k] = v
		}
		if len(got) < 10 {
			t.Fatalf("stage %s: %d names, too few to tell: %v", stage, len(got), got)
		}
		all[stage] = got
	}
	for name, where := range all["dev"] {
		if other, ok := all["prod"][name]; ok {
			t.Errorf("dev's %s and prod's %s share the name %s", where, other, name)
		}
	}
	if !strings.Contains(fmt.Sprint(all["dev"]), "Quire-dev") {
		t.Errorf("the dev stage names nothing after Quire-dev: %v", all["dev"])
	}
}

// TestStageNames: a stage names the stack; a name that is not a stage's
// fails the synth, naming the key. The names are read from apps with
// nothing in them, where an app defined per name took seconds; the dev
// stage's stack, defined, carries its name.
func TestStageNames(t *testing.T) {
	needsNode(t)
	named := func(stage string) string {
		return stackName(awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{contextStage: stage}}))
	}
	for stage, want := range map[string]string{"": "Quire", "dev": "Quire-dev", "pr-42": "Quire-pr-42"} {
		if got := named(stage); got != want {
			t.Errorf("quire:stage=%q: stack %s, want %s", stage, got, want)
		}
	}
	stack, err := defined(map[string]any{contextStage: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if got := *stack.StackName(); got != "Quire-dev" {
		t.Errorf("quire:stage=dev: the stack defined is %s, want Quire-dev", got)
	}
	for _, bad := range []string{"Prod", "dev_1", "-x", strings.Repeat("a", 21), "a/b"} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, contextStage) {
					t.Errorf("quire:stage=%q: %q, want a failure naming the key", bad, msg)
				}
			}()
			_, _ = defined(map[string]any{contextStage: bad})
		}()
	}
}

// TestPresets: a development stage (dev, pr-42, or any stage of
// quire:stageKind=development) deploys at once, has no web ACL, keeps its
// logs a week and its tables go with it; a production stage (prod, none,
// prod-eu: any name that does not say development) has the canary, the
// web ACL, a month of logs, tables kept and protected, and termination
// protection; each value of a preset yields to its own key.
func TestPresets(t *testing.T) {
	needsNode(t)
	type want struct {
		deployment string
		waf        bool
		retention  float64
		retain     bool
		protected  bool
	}
	dev, prod := want{"AllAtOnce", false, 7, false, false}, want{"Canary10Percent5Minutes", true, 30, true, true}
	// The kind of a stage is the context's alone: read from an app with
	// nothing in it, where a synthesis per name took seconds.
	for _, tc := range []struct {
		context map[string]any
		kind    stageKind
	}{
		{map[string]any{contextStage: "dev"}, development},
		{map[string]any{contextStage: "prod"}, production},
		{map[string]any{}, production},
		{map[string]any{contextStage: "prod-eu"}, production},
		{map[string]any{contextStage: "pr-42"}, development},
		{map[string]any{contextStage: "dev", contextStageKind: "production"}, production},
		{map[string]any{contextStage: "staging", contextStageKind: "development"}, development},
	} {
		if got := kindOf(awscdk.NewApp(&awscdk.AppProps{Context: &tc.context})); got != tc.kind {
			t.Errorf("%v: a %s stage, want %s", tc.context, got, tc.kind)
		}
	}
	// Each kind's preset as the stack deploys it, and each value of a
	// preset yielding to its own key.
	for _, tc := range []struct {
		context map[string]any
		want    want
	}{
		{map[string]any{contextStage: "dev"}, dev},
		{map[string]any{}, prod},
		{map[string]any{contextStage: "dev", contextDeployment: "Canary10Percent5Minutes", contextWAF: "true",
			contextLogRetention: "30", contextRemoval: "retain", contextTerminationProtection: "true"}, prod},
		{map[string]any{contextStage: "prod", contextDeployment: "AllAtOnce", contextWAF: "false",
			contextLogRetention: 7, contextRemoval: "destroy", contextTerminationProtection: false}, dev},
	} {
		stack, err := defined(tc.context)
		if err != nil {
			t.Fatal(err)
		}
		s, err := synthOutputWith(tc.context)
		if err != nil {
			t.Fatal(err)
		}
		res := resourcesOf(t, s.main)
		var got want
		got.protected = *stack.TerminationProtection()
		for _, r := range res {
			switch r.Type {
			case "AWS::CodeDeploy::DeploymentGroup":
				got.deployment = strings.TrimPrefix(fmt.Sprint(r.Properties["DeploymentConfigName"]), "CodeDeployDefault.Lambda")
			case "AWS::WAFv2::WebACL":
				got.waf = true
			case "AWS::Logs::LogGroup":
				got.retention = r.Properties["RetentionInDays"].(float64)
			case "AWS::DynamoDB::Table":
				got.retain = r.DeletionPolicy == "Retain" && r.Properties["DeletionProtectionEnabled"] == true
			}
		}
		if got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.context, got, tc.want)
		}
	}
	for key, bad := range map[string]any{contextStageKind: "staging", contextLogRetention: "10", contextRemoval: "keep", contextTerminationProtection: "yes"} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, key) {
					t.Errorf("%s=%v: %q, want a failure naming the key", key, bad, msg)
				}
			}()
			_, _ = defined(map[string]any{key: bad})
		}()
	}
}

// TestDestroyRefusesProduction: make destroy refuses, before anything is
// built, every stage the app would make production (kindOf), and allows
// every development one: the Makefile's development-stage target and
// infra/stages.go keep one rule, for names, quire:stageKind in CDK_ARGS
// and in cdk.json's context (CDK_ARGS first, as the CDK reads them).
func TestDestroyRefusesProduction(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make:", err)
	}
	needsNode(t) // make runs the CDK app
	makefile, err := filepath.Abs(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^destroy: development-stage\b`).Match(b) {
		t.Error("the Makefile's destroy does not check development-stage first")
	}
	type kv = [2]string
	cases := []struct {
		stage   string
		args    []kv // CDK_ARGS' -c key=value, in order
		cdkJSON []kv // cdk.json's context
	}{
		{stage: ""}, {stage: "dev"}, {stage: "development"}, {stage: "test"}, {stage: "dev-alice"}, {stage: "dev-"},
		{stage: "test-1"}, {stage: "pr-42"}, {stage: "prod"}, {stage: "production"}, {stage: "prod-eu"},
		{stage: "production-eu"}, {stage: "live"}, {stage: "staging"}, {stage: "devel"}, {stage: "developer"},
		{stage: "tests"}, {stage: "pr"}, {stage: "preview"}, {stage: "qa"}, {stage: "Dev"},
		{stage: "dev", args: []kv{{contextStageKind, "production"}}},
		{stage: "staging", args: []kv{{contextStageKind, "development"}}},
		{stage: "", args: []kv{{contextStageKind, "development"}}},
		{stage: "dev", args: []kv{{contextStageKind, "development"}, {contextStageKind, "production"}}},
		{stage: "dev", args: []kv{{contextStageKind, "staging"}}},
		{stage: "dev", cdkJSON: []kv{{contextStageKind, "production"}}},
		{stage: "staging", cdkJSON: []kv{{contextStageKind, "development"}}},
		{stage: "staging", args: []kv{{contextStageKind, "production"}}, cdkJSON: []kv{{contextStageKind, "development"}}},
		{stage: "dev", args: []kv{{contextStageKind, "development"}}, cdkJSON: []kv{{contextStageKind, "production"}}},
		{stage: "dev", args: []kv{{contextWAF, "false"}}},
	}
	for _, tc := range cases {
		// What the CDK gives the app: cdk.json's context, then CDK_ARGS'
		// (the later -c of a key wins), then make destroy's quire:stage.
		context := map[string]any{}
		file := map[string]any{}
		var args []string
		for _, c := range tc.cdkJSON {
			context[c[0]], file[c[0]] = c[1], c[1]
		}
		for _, c := range tc.args {
			context[c[0]] = c[1]
			args = append(args, "-c", c[0]+"="+c[1])
		}
		context[contextStage] = tc.stage
		isProduction := func() (yes bool) {
			defer func() {
				if recover() != nil {
					yes = true // the synth fails: nothing to destroy as development
				}
			}()
			return kindOf(awscdk.NewApp(&awscdk.AppProps{Context: &context})) == production
		}()

		dir := t.TempDir()
		cdk, err := json.MarshalIndent(map[string]any{"app": "go run ./infra", "context": file}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cdk.json"), cdk, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("make", "--no-print-directory", "-C", dir, "-f", makefile, "development-stage",
			"STAGE="+tc.stage, "CDK_ARGS="+strings.Join(args, " "))
		out, err := cmd.CombinedOutput()
		refused := err != nil
		if refused && !strings.Contains(string(out), "make destroy: refused") {
			t.Errorf("STAGE=%q CDK_ARGS=%v cdk.json %v: make failed, not refusing: %v\n%s", tc.stage, args, file, err, out)
		}
		if refused != isProduction {
			t.Errorf("STAGE=%q CDK_ARGS=%v cdk.json %v: make destroy refused: %v, but the app's kind is production: %v\n%s",
				tc.stage, args, file, refused, isProduction, out)
		}
	}
}
