package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/service"
)

// authorizerEvent is the REQUEST authorizer event of GET /users/1 with the
// admin's token.
func authorizerEvent(token string) events.APIGatewayCustomAuthorizerRequestTypeRequest {
	return events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type:       "REQUEST",
		MethodArn:  "arn:aws:execute-api:us-east-1:123456789012:abc123def4/prod/GET/users/1",
		Resource:   "/users/{id}",
		Path:       "/users/1",
		HTTPMethod: "GET",
		Headers:    map[string]string{"Authorization": "Bearer " + token, "Host": "abc123def4.execute-api.us-east-1.amazonaws.com"},
	}
}

// verifyCost is the warm cost of verifying one token: Verify alone, and the
// authorizer's whole answer (parse the header, verify, build the policy).
type verifyCost struct {
	name                             string
	nsPerOp, allocsPerOp, bytesPerOp int64
}

func authorizerCosts(cfg service.Config, token string) ([]verifyCost, error) {
	a, err := api.Authorizer(cfg)
	if err != nil {
		return nil, err
	}
	ev := authorizerEvent(token)
	if _, err := a.Handle(context.Background(), ev); err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	var out []verifyCost
	for _, b := range []struct {
		name string
		fn   func() error
	}{
		{"Verifier.Verify", func() error { _, err := a.Verifier.Verify(token); return err }},
		{"Authorizer.Handle", func() error { _, err := a.Handle(context.Background(), ev); return err }},
	} {
		var failed error
		r := testing.Benchmark(func(tb *testing.B) {
			tb.ReportAllocs()
			for tb.Loop() {
				if err := b.fn(); err != nil {
					failed = err
				}
			}
		})
		if failed != nil {
			return nil, failed
		}
		out = append(out, verifyCost{b.name, r.NsPerOp(), r.AllocsPerOp(), r.AllocedBytesPerOp()})
	}
	return out, nil
}

// loginTime is the median time of a login outcome, a refresh or a logout
// through the local gateway, against DynamoDB Local.
type loginTime struct {
	name   string
	status int
	median time.Duration
}

// loginTimes times a successful login, a wrong password and an unknown
// email, interleaved: the two failures should take about as long, so that
// timing does not tell which emails have accounts. Each successful login's
// session is then refreshed (POST /tokens) and ended (DELETE /session with
// the refreshed access token), each timed too.
func loginTimes(cfg service.Config) ([]loginTime, error) {
	gw, err := api.Gateway(cfg)
	if err != nil {
		return nil, err
	}
	out := []loginTime{
		{name: "success", status: 200},
		{name: "wrong password", status: 401},
		{name: "unknown email", status: 401},
		{name: "refresh (`POST /tokens`)", status: 200},
		{name: "logout (`DELETE /session`)", status: 204},
	}
	// Each run's success clears the wrong password's count of failed
	// logins; each unknown email is another, so that neither is locked.
	bodies := func(run int) []string {
		return []string{
			fmt.Sprintf(`{"email":%q,"password":%q}`, demo.CustomerEmail, demo.CustomerPassword),
			fmt.Sprintf(`{"email":%q,"password":"wrong password"}`, demo.CustomerEmail),
			fmt.Sprintf(`{"email":"nobody%d@quire.example","password":"wrong password"}`, run),
		}
	}
	times := make([][]time.Duration, len(out))
	send := func(i int, method, path, body, token string) (*httptest.ResponseRecorder, error) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		gw.ServeHTTP(rec, req)
		times[i] = append(times[i], time.Since(start))
		if rec.Code != out[i].status {
			return nil, fmt.Errorf("%s = %d: %s", out[i].name, rec.Code, rec.Body)
		}
		return rec, nil
	}
	for run := range runs {
		var session httpapi.TokenResponse
		for i, body := range bodies(run) {
			rec, err := send(i, "POST", "/login", body, "")
			if err != nil {
				return nil, err
			}
			if i == 0 {
				if err := json.Unmarshal(rec.Body.Bytes(), &session); err != nil {
					return nil, err
				}
			}
		}
		body, _ := json.Marshal(httpapi.RefreshRequest{RefreshToken: &session.RefreshToken})
		rec, err := send(3, "POST", "/tokens", string(body), "")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &session); err != nil {
			return nil, err
		}
		if _, err := send(4, "DELETE", "/session", "", session.AccessToken); err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].median = median(times[i])
	}
	return out, nil
}

// devKeys returns a new private key set as JSON.
func devKeys() (string, error) {
	k, err := auth.GenerateKey(time.Now())
	if err != nil {
		return "", err
	}
	b, err := auth.KeySet{Keys: []auth.Key{k}}.MarshalJSON()
	return string(b), err
}

// authorizerOK checks an authorizer's answer: a policy for a principal.
func authorizerOK(res result) error {
	if res.err != "" {
		return fmt.Errorf("invocation error: %s", res.err)
	}
	var resp events.APIGatewayCustomAuthorizerResponse
	if err := json.Unmarshal(res.body, &resp); err != nil || resp.PrincipalID == "" {
		return fmt.Errorf("authorizer response %q: %v", res.body, err)
	}
	return nil
}
