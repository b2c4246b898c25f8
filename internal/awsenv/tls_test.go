package awsenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/quireapi/quire/internal/testing/awsenvtest"
)

func TestRoots(t *testing.T) {
	aws := Env{}.Roots("dynamodb.eu-west-1.amazonaws.com")
	if aws == nil {
		t.Fatal("no pool of AWS's roots for an AWS endpoint")
	}
	block, _ := pem.Decode(rootsPEM)
	first, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Verify(x509.VerifyOptions{Roots: aws}); err != nil || first.Subject.CommonName != "Amazon Root CA 1" {
		t.Errorf("the pool does not hold %s: %v", first.Subject.CommonName, err)
	}
	if n := strings.Count(string(rootsPEM), "BEGIN CERTIFICATE"); n != 5 {
		t.Errorf("roots.pem holds %d roots, want AWS's five", n)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "dynamodb.cn-north-1.amazonaws.com.cn", "amazonaws.com.evil.example"} {
		if (Env{}).Roots(host) != nil {
			t.Errorf("%s is verified with AWS's roots, want the system's", host)
		}
	}
	if (Env{SystemRoots: true}).Roots("dynamodb.eu-west-1.amazonaws.com") != nil {
		t.Error("QUIRE_TLS_ROOTS=system: an AWS endpoint is verified with AWS's roots, want the system's")
	}
	if !FromEnv(env{"QUIRE_TLS_ROOTS": "system"}.get).SystemRoots || FromEnv(env{}.get).SystemRoots {
		t.Error("QUIRE_TLS_ROOTS=system does not set SystemRoots, or its absence does")
	}
	for region, want := range map[string]string{
		"eu-west-1": "https://dynamodb.eu-west-1.amazonaws.com", "cn-north-1": "https://dynamodb.cn-north-1.amazonaws.com.cn",
	} {
		if got := (Env{Region: region}).Endpoint("dynamodb"); got != want {
			t.Errorf("the endpoint in %s = %s, want %s", region, got, want)
		}
	}
}

type env map[string]string

func (m env) get(k string) string { return m[k] }

// testCA returns a server certificate for host, and 127.0.0.1, from a CA
// of this test, which it writes as the system's pool (SSL_CERT_FILE), which
// crypto/x509 reads once per process: every test of this package that
// trusts the system's pool trusts this CA alone.
var testCA = func() func(t *testing.T, host string) tls.Certificate {
	ca, err := awsenvtest.NewCA("Quire test CA")
	if err != nil {
		panic(err)
	}
	file := filepath.Join(os.TempDir(), "quire-awsenv-test-ca.pem")
	_ = os.WriteFile(file, ca.PEM, 0o600)
	os.Setenv("SSL_CERT_FILE", file)
	os.Setenv("SSL_CERT_DIR", filepath.Join(os.TempDir(), "quire-awsenv-no-certs"))
	return func(t *testing.T, host string) tls.Certificate {
		t.Helper()
		cert, err := ca.Certificate(host, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
}()

// server serves 200 over TLS with a certificate for host from testCA, and
// counts the connections it accepts and the handshakes that complete.
type server struct {
	*httptest.Server
	conns, handshakes atomic.Int32
	opened            chan struct{} // one value per connection
}

func newServer(t *testing.T, host string, secure bool) *server {
	s := &server{opened: make(chan struct{}, 100)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
			s.opened <- struct{}{}
		}
	}
	if secure {
		s.TLS = &tls.Config{
			Certificates: []tls.Certificate{testCA(t, host)},
			VerifyConnection: func(tls.ConnectionState) error {
				s.handshakes.Add(1)
				return nil
			},
		}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, tr *http.Transport, url string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// An AWS endpoint is verified with AWS's roots alone, not with the system's
// pool, unless QUIRE_TLS_ROOTS=system; any other endpoint with the
// system's pool.
func TestTransportTrust(t *testing.T) {
	const aws = "dynamodb.us-east-1.amazonaws.com"
	s := newServer(t, aws, true)
	dialer := &net.Dialer{Timeout: time.Second}
	for _, tc := range []struct {
		env     Env
		url     string
		trusted bool
	}{
		{Env{}, "https://" + aws + "/", false},
		{Env{SystemRoots: true}, "https://" + aws + "/", true},
		{Env{}, s.URL + "/", true},
	} {
		tr := tc.env.Transport(tc.url, dialer, time.Second, false)
		// The endpoint's roots, at the test server's address.
		c, err := tr.DialTLSContext(t.Context(), "tcp", s.Listener.Addr().String())
		if c != nil {
			c.Close()
		}
		var unknown x509.UnknownAuthorityError
		switch {
		case tc.trusted && err != nil:
			t.Errorf("%+v %s: %v, want it trusted", tc.env, tc.url, err)
		case !tc.trusted && !errors.As(err, &unknown):
			t.Errorf("%+v %s: %v, want a certificate of an unknown authority", tc.env, tc.url, err)
		}
	}
	if err := get(t, Env{}.Transport(s.URL, dialer, time.Second, false), s.URL+"/"); err != nil {
		t.Errorf("a request to %s: %v", s.URL, err)
	}
}

// A transport that warms up opens its connection, handshake included, once
// StartWarmUps is called, before any request, and its first requests use
// that one: one connection, one handshake, for requests one after another.
func TestTransportWarmUp(t *testing.T) {
	for _, secure := range []bool{false, true} {
		s := newServer(t, "localhost", secure)
		tr := Env{}.Transport(s.URL, &net.Dialer{Timeout: time.Second}, time.Second, true)
		StartWarmUps() // as a function's init ends
		select {
		case <-s.opened:
		case <-time.After(5 * time.Second):
			t.Fatalf("secure %v: no connection opened ahead of the first request", secure)
		}
		for range 5 {
			if err := get(t, tr, s.URL+"/"); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("secure %v: %d connections for 5 requests, want the one opened ahead", secure, n)
		}
		if n := s.handshakes.Load(); secure && n != 1 {
			t.Errorf("%d TLS handshakes for 5 requests, want the one done ahead", n)
		}
		tr.CloseIdleConnections()
	}
}

// A warm-up registered with WarmUp starts once StartWarmUps is called, as a
// function's init ends.
func TestWarmUp(t *testing.T) {
	started := make(chan struct{})
	WarmUp(func() { close(started) })
	StartWarmUps()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the warm-up did not start once StartWarmUps was called")
	}
}

// An endpoint that accepts a connection and never answers the handshake
// holds the first request, which starts the warm-up no StartWarmUps has,
// no longer than its own deadline; once the handshake's bound has passed,
// the next request dials anew.
func TestTransportWarmUpNeverAnswered(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the test ends
		}
	}()
	url := "https://" + l.Addr().String() + "/"
	tr := Env{}.Transport(url, &net.Dialer{Timeout: 100 * time.Millisecond}, 100*time.Millisecond, true)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	start := time.Now()
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a request to a silent endpoint succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the first request waited %v for a handshake that never ends, want its deadline, 50 ms", d)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	start = time.Now()
	if _, err := tr.RoundTrip(req); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("the next request: %v after %v, want a handshake timeout of its own within its bound", err, time.Since(start))
	}
}

// sdkBody is a request body as the AWS SDK hands it to net/http: once the
// SDK has closed it, on reading the answer, its WriteTo fails with io.EOF.
// Here WriteTo waits for that close, as the goroutine writing a request
// does when it pauses between writing the body and draining it.
type sdkBody struct {
	r      *bytes.Reader
	closed chan struct{}
	once   sync.Once
}

func newSDKBody(s string) *sdkBody {
	return &sdkBody{r: bytes.NewReader([]byte(s)), closed: make(chan struct{})}
}

func (b *sdkBody) Read(p []byte) (int, error) {
	select {
	case <-b.closed:
		return 0, io.EOF
	default:
		return b.r.Read(p)
	}
}

func (b *sdkBody) WriteTo(io.Writer) (int64, error) {
	<-b.closed
	return 0, io.EOF
}

func (b *sdkBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// The SDK's request body, once closed, fails WriteTo with io.EOF, as
// sdkBody does: what KeepConnections is for. Should this fail, the SDK has
// changed, and KeepConnections may no longer be needed.
func TestSDKBodyAfterClose(t *testing.T) {
	const json = `{"TableName":"users"}`
	stack, err := smithyhttp.NewStackRequest().(*smithyhttp.Request).SetStream(strings.NewReader(json))
	if err != nil {
		t.Fatal(err)
	}
	stack.ContentLength = int64(len(json))
	body := stack.Build(t.Context()).Body
	w, ok := body.(io.WriterTo)
	if !ok {
		t.Fatalf("the SDK's request body (%T) has no WriteTo", body)
	}
	body.Close()
	if _, err := w.WriteTo(io.Discard); err != io.EOF {
		t.Errorf("WriteTo of the SDK's request body once closed: %v, want io.EOF", err)
	}
}

// Requests through KeepConnections, one after another, share one
// connection even when the SDK closes a body before net/http has drained
// it. Through net/http alone, each request after such a close opens one.
func TestKeepConnections(t *testing.T) {
	for _, c := range []struct {
		name  string
		wrap  func(http.RoundTripper) http.RoundTripper
		conns int32
	}{
		{"net/http alone", func(rt http.RoundTripper) http.RoundTripper { return rt }, 3},
		{"KeepConnections", KeepConnections, 1},
	} {
		s := newServer(t, "localhost", false)
		tr := &http.Transport{}
		rt := c.wrap(tr)
		for range 3 {
			body := newSDKBody(`{"TableName":"users"}`)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/", body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = int64(body.r.Len())
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			body.Close() // as the SDK does once it has read the answer
		}
		if n := s.conns.Load(); n != c.conns {
			t.Errorf("%s: 3 requests one after another opened %d connections, want %d", c.name, n, c.conns)
		}
		tr.CloseIdleConnections()
	}
}
