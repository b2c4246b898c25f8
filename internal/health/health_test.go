package health_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/health"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

func TestHealthy(t *testing.T) {
	api := servicetest.New(t)
	for _, path := range []string{"/health", "/status"} {
		r := api.Do(t, "GET", path, "")
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s = %d %s, Cache-Control %q", path, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
		}
		var b health.Body
		if err := json.Unmarshal([]byte(r.Body), &b); err != nil || b != (health.Body{Status: "ok", Database: "ok"}) {
			t.Errorf("GET %s body %s", path, r.Body)
		}
	}
}

// silent accepts connections and never answers: a DynamoDB that hangs.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestUnavailable(t *testing.T) {
	for name, endpoint := range map[string]string{
		"refused": dynamotest.Unreachable(),
		"hanging": silent(t),
	} {
		t.Run(name, func(t *testing.T) {
			h, err := service.Health(service.Config{DynamoDB: dynamo.Config{Endpoint: endpoint}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := apigw.NewHandler(h, nil)(context.Background(), events.APIGatewayProxyRequest{
				HTTPMethod: "GET", Path: "/health", Resource: "/health",
				RequestContext: events.APIGatewayProxyRequestContext{RequestID: "req-1", Path: "/health"},
			})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			var p rest.Problem
			if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
				t.Fatal(err)
			}
			hdr := http.Header(resp.MultiValueHeaders)
			if resp.StatusCode != 503 || hdr.Get("Content-Type") != rest.ProblemMediaType || hdr.Get("Retry-After") == "" ||
				hdr.Get("Cache-Control") != "no-store" || p.Type != rest.ProblemType("unavailable") || p.RequestID != "req-1" {
				t.Errorf("got %d %v %s", resp.StatusCode, hdr, resp.Body)
			}
			if elapsed > health.Timeout+time.Second {
				t.Errorf("the check took %v, over its %v timeout", elapsed, health.Timeout)
			}
		})
	}
}
