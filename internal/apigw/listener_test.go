package apigw

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

// The requests net/http refuses before the gateway sees them get
// problem+json, as the gateway's own answers do, and reach no function;
// every other answer on the same listener is the gateway's, byte for byte.
func TestListenerAnswersUnreadableRequestsWithProblems(t *testing.T) {
	f := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200, Body: `{"id":1}`,
		Headers: map[string]string{"Content-Type": "application/json"}}}
	a := &fakeAuthorizer{policy: "Allow", role: "customer"}
	srv := httptest.NewUnstartedServer(&Gateway{Functions: map[string]Handler{routes.GroupUsers: f.handle}, Authorizer: a.handle})
	srv.Listener = Listener(srv.Listener)
	srv.Config.MaxHeaderBytes = 1 << 10
	srv.Start()
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name, request string
		status        int
		detail        string
	}{
		{"bad escape in the path", "GET /users/%zz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good-1\r\n\r\n", 400, "A % in a path must begin an escape such as %25."},
		{"a lone percent", "GET /users/% HTTP/1.1\r\nHost: x\r\n\r\n", 400, "A % in a path must begin an escape such as %25."},
		{"no Host", "GET /users/1 HTTP/1.1\r\n\r\n", 400, "The request could not be read: missing required Host header."},
		{"headers too large", "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 431, "The request could not be read: Request Header Fields Too Large."},
	} {
		f.got = events.APIGatewayProxyRequest{}
		resp, body := raw(t, srv.Listener.Addr().String(), tc.request)
		var p rest.Problem
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("%s: body %q: %v", tc.name, body, err)
		}
		if resp.StatusCode != tc.status || p.Status != tc.status || p.Type != rest.ProblemType("invalid") ||
			!strings.Contains(p.Detail, tc.detail) || p.RequestID == "" || p.RequestID != resp.Header.Get("X-Amzn-Requestid") {
			t.Errorf("%s: status %d, problem %+v; want %d with %q", tc.name, resp.StatusCode, p, tc.status, tc.detail)
		}
		for h, want := range map[string]string{"Content-Type": rest.ProblemMediaType, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", tc.name, h, got, want)
			}
		}
		if f.got.HTTPMethod != "" {
			t.Errorf("%s: a function was called", tc.name)
		}
	}

	resp, body := raw(t, srv.Listener.Addr().String(), "GET /users/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good-1\r\n\r\n")
	if resp.StatusCode != 200 || string(body) != `{"id":1}` || f.got.Path != "/users/1" {
		t.Errorf("a readable request: status %d, body %q, function saw %q", resp.StatusCode, body, f.got.Path)
	}
}

// raw sends request as it is, bytes no client library would send, and
// reads the answer.
func raw(t *testing.T, addr, request string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// refusal takes net/http's own answers and nothing else.
func TestRefusal(t *testing.T) {
	for b, want := range map[string]int{
		"HTTP/1.1 400 Bad Request" + refusalHeaders + "400 Bad Request":                                           400,
		"HTTP/1.1 400 Bad Request: missing required Host header" + refusalHeaders + "400 Bad Request: missing...": 400,
		"HTTP/1.1 501 Not Implemented" + refusalHeaders + "Unsupported transfer encoding":                         501,
		"HTTP/1.1 200 OK" + refusalHeaders + "fine":                                                               0,
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\n\r\n{}":                            0,
		"HTTP/1.0 400 Bad Request" + refusalHeaders:                                                               0,
		"HTTP/1.1 4" + refusalHeaders:                                                                             0,
		"":                                                                                                        0,
	} {
		p, ok := refusal([]byte(b))
		if ok != (want != 0) || p.Status != want {
			t.Errorf("%q: problem %+v, %v; want status %d", b, p, ok, want)
		}
	}
}

func FuzzRefusal(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request" + refusalHeaders + "400 Bad Request: x"))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, ok := refusal(b); ok && (p.Status < 400 || p.Status > 599 || p.Detail == "") {
			t.Errorf("%q: problem %+v", b, p)
		}
	})
}
