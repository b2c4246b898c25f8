package pretraffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/quireapi/quire/internal/awsenv"
)

// Event is what CodeDeploy sends a lifecycle hook.
type Event struct {
	DeploymentID                  string `json:"DeploymentId"`
	LifecycleEventHookExecutionID string `json:"LifecycleEventHookExecutionId"`
}

// CodeDeploy is the part of CodeDeploy's client the hook calls.
type CodeDeploy interface {
	GetDeployment(context.Context, *codedeploy.GetDeploymentInput, ...func(*codedeploy.Options)) (*codedeploy.GetDeploymentOutput, error)
	PutLifecycleEventHookExecutionStatus(context.Context, *codedeploy.PutLifecycleEventHookExecutionStatusInput, ...func(*codedeploy.Options)) (*codedeploy.PutLifecycleEventHookExecutionStatusOutput, error)
}

// Lambda is the part of Lambda's client the hook calls.
type Lambda interface {
	Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Actions are the IAM actions of the calls the hook makes, by the method of
// CodeDeploy or Lambda that makes each: its role must allow every one
// (infra's TestPreTrafficHook), and a method added to either interface
// needs its action here (TestActions).
var Actions = map[string]string{
	"GetDeployment":                        "codedeploy:GetDeployment",
	"PutLifecycleEventHookExecutionStatus": "codedeploy:PutLifecycleEventHookExecutionStatus",
	"Invoke":                               "lambda:InvokeFunction",
}

// Hook is the BeforeAllowTraffic hook of every deployment group of the
// stack: one function for all, as a deployment names its group, which
// names the version to check. One hook costs the stack one function, where
// a hook per group would cost it eight.
type Hook struct {
	CodeDeploy CodeDeploy
	Lambda     Lambda
	// Versions are the new versions, by deployment group (named after its
	// function's group): the ARNs, with their version number, that the
	// deployments move the aliases to.
	Versions map[string]string
}

// MemoryMB is the hook function's memory: it waits on the versions it
// invokes, and needs little.
const MemoryMB = 128

// VersionsEnv is the variable HookFromEnv reads Hook.Versions from, as a
// JSON object.
const VersionsEnv = "NEW_VERSIONS"

// HookFromEnv returns the hook with clients of the function's region and
// credentials and the versions of VersionsEnv. It returns an error when
// the credentials are not set or VersionsEnv names no version.
func HookFromEnv(getenv func(string) string) (*Hook, error) {
	env := awsenv.FromEnv(getenv)
	if !env.HasCredentials() {
		return nil, errors.New("pretraffic: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	h := &Hook{
		CodeDeploy: codedeploy.New(codedeploy.Options{Region: env.Region, Credentials: env.Credentials(), HTTPClient: &http.Client{Timeout: 5 * time.Second, Transport: awsenv.KeepConnections(http.DefaultTransport)}}),
		// An invocation of a new version is a cold start.
		Lambda: lambda.New(lambda.Options{Region: env.Region, Credentials: env.Credentials(), HTTPClient: &http.Client{Timeout: 15 * time.Second, Transport: awsenv.KeepConnections(http.DefaultTransport)}}),
	}
	if err := json.Unmarshal([]byte(getenv(VersionsEnv)), &h.Versions); err != nil || len(h.Versions) == 0 {
		return nil, fmt.Errorf("pretraffic: %s: want a JSON object of versions by group: %v", VersionsEnv, err)
	}
	return h, nil
}

// ReportMargin is the time Handle keeps, of its invocation's, for the
// report: checks still running then have failed.
const ReportMargin = 5 * time.Second

// Handle checks the new version of the deployment's group and reports to
// CodeDeploy: Succeeded lets the deployment shift traffic, Failed stops it,
// and CodeDeploy rolls the alias back. Any error before the report is a
// failed check, so that a deployment never waits out the hook's hour. It
// returns an error only when the report itself failed.
func (h *Hook) Handle(ctx context.Context, ev Event) error {
	checks, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok { // keep time to report
		checks, cancel = context.WithDeadline(ctx, d.Add(-ReportMargin))
	}
	group, err := h.check(checks, ev.DeploymentID)
	cancel()
	status := types.LifecycleEventStatusSucceeded
	if err != nil {
		status = types.LifecycleEventStatusFailed
		slog.ErrorContext(ctx, "pre-traffic checks failed", "deployment", ev.DeploymentID, "group", group, "err", err)
	} else {
		slog.InfoContext(ctx, "pre-traffic checks passed", "deployment", ev.DeploymentID, "group", group, "version", h.Versions[group])
	}
	_, err = h.CodeDeploy.PutLifecycleEventHookExecutionStatus(ctx, &codedeploy.PutLifecycleEventHookExecutionStatusInput{
		DeploymentId:                  &ev.DeploymentID,
		LifecycleEventHookExecutionId: &ev.LifecycleEventHookExecutionID,
		Status:                        status,
	})
	if err != nil {
		return fmt.Errorf("report %s to CodeDeploy: %w", status, err)
	}
	return nil
}

// check runs the checks of the deployment's group against its new version.
func (h *Hook) check(ctx context.Context, deploymentID string) (group string, err error) {
	d, err := h.CodeDeploy.GetDeployment(ctx, &codedeploy.GetDeploymentInput{DeploymentId: &deploymentID})
	if err != nil {
		return "", fmt.Errorf("read the deployment: %w", err)
	}
	if d.DeploymentInfo == nil || d.DeploymentInfo.DeploymentGroupName == nil {
		return "", errors.New("the deployment names no deployment group")
	}
	group = *d.DeploymentInfo.DeploymentGroupName
	version, ok := h.Versions[group]
	if !ok {
		return group, fmt.Errorf("no new version of deployment group %q", group)
	}
	return group, Check(ctx, group, func(ctx context.Context, payload []byte) ([]byte, error) {
		out, err := h.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: &version, Payload: payload})
		// The stack updated the hook's policy to the new versions just
		// before the alias: IAM may take seconds to apply it.
		for pause := time.Second; accessDenied(err) && pause <= 8*time.Second; pause *= 2 {
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(pause):
			}
			out, err = h.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: &version, Payload: payload})
		}
		if err != nil {
			return nil, err
		}
		if out.FunctionError != nil {
			var e struct {
				Message string `json:"errorMessage"`
			}
			if json.Unmarshal(out.Payload, &e) != nil || e.Message == "" {
				e.Message = *out.FunctionError
			}
			return nil, errors.New(e.Message)
		}
		return out.Payload, nil
	})
}

func accessDenied(err error) bool {
	var e smithy.APIError
	return errors.As(err, &e) && e.ErrorCode() == "AccessDeniedException"
}

// Handler returns the Invoke of h called in this process, as Lambda calls
// it: the payload decoded as h's event, its answer encoded, its error the
// function's error.
func Handler[E, R any](h func(context.Context, E) (R, error)) Invoke {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev E
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp, err := h(ctx, ev)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
}
