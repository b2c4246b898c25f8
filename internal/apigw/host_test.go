package apigw

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
)

func TestHosts(t *testing.T) {
	addr := func(ip string) *net.TCPAddr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 8080} }
	for _, tc := range []struct {
		addr  *net.TCPAddr
		names string
		want  []string // nil for an error
	}{
		{addr("127.0.0.1"), "", []string{"127.0.0.1:8080", "localhost:8080"}},
		{addr("::1"), "", []string{"[::1]:8080", "localhost:8080"}},
		{addr("0.0.0.0"), "", []string{"0.0.0.0:8080", "127.0.0.1:8080", "[::1]:8080", "localhost:8080"}},
		{addr("192.168.1.5"), "", []string{"192.168.1.5:8080"}},
		{addr("192.168.1.5"), " Shop.Example, proxy.example:80,,[fe80::1],192.168.1.5 ",
			[]string{"192.168.1.5:8080", "[fe80::1]:8080", "proxy.example:80", "shop.example:8080"}},
		{addr("127.0.0.1"), "http://shop.example", nil},
		{addr("127.0.0.1"), "shop.example/docs", nil},
		{addr("127.0.0.1"), "me@shop.example", nil},
		{addr("127.0.0.1"), "shop.example:http", nil},
		{addr("127.0.0.1"), "shop example", nil},
		{addr("127.0.0.1"), ":8080", nil},
	} {
		got, err := Hosts(tc.addr, tc.names)
		if (err != nil) != (tc.want == nil) {
			t.Errorf("Hosts(%s, %q) = %v, %v", tc.addr, tc.names, got, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Hosts(%s, %q) (-want +got):\n%s", tc.addr, tc.names, diff)
		}
	}
}

// TestGatewayServesItsHosts: the gateway answers a request whose Host is
// one it serves, its port included, and any other with 400, without
// calling a function: links built from a Host it does not serve would
// lead a client, or a cache, elsewhere.
func TestGatewayServesItsHosts(t *testing.T) {
	f := &recorder{resp: events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}", Headers: map[string]string{"Content-Type": "application/json"}}}
	gw := &Gateway{Functions: map[string]Handler{routes.GroupHealth: f.handle}}
	srv := httptest.NewUnstartedServer(gw)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	var err error
	if gw.Hosts, err = Hosts(srv.Listener.Addr().(*net.TCPAddr), "shop.example,proxy.example:80"); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LocalHost:" + port, 200},
		{"shop.example:" + port, 200},
		{"proxy.example", 200},
		{"proxy.example:80", 200},
		{"evil.example", 400},
		{"evil.example:" + port, 400},
		{"localhost", 400},
		{"localhost:1" + port, 400},
		{"127.0.0.1", 400},
		{"shop.example", 400},
		{"shop.example.:" + port, 400},
		{"localhost:" + port + "@evil.example", 400},
	} {
		f.got = events.APIGatewayProxyRequest{}
		req, _ := http.NewRequest("GET", srv.URL+"/health", nil)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Host %s: %d %s, want %d", tc.host, resp.StatusCode, body, tc.status)
			continue
		}
		if tc.status == 200 {
			if f.got.RequestContext.DomainName != tc.host {
				t.Errorf("Host %s: the function's domain name is %q", tc.host, f.got.RequestContext.DomainName)
			}
			continue
		}
		var p rest.Problem
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Type") != rest.ProblemMediaType || p.Type != rest.ProblemType("invalid") || p.Status != 400 ||
			f.got.HTTPMethod != "" {
			t.Errorf("Host %s: %s %s, the function called with %q; want an invalid problem without it", tc.host,
				resp.Header.Get("Content-Type"), body, f.got.HTTPMethod)
		}
	}
}
