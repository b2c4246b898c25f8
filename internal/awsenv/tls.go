package awsenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// rootsPEM are the roots AWS's public endpoints chain to: Amazon Root CA 1
// to 4 and Starfield Services Root Certificate Authority - G2, which
// cross-signs them (https://www.amazontrust.com/repository/), as Debian's
// ca-certificates holds them.
//
//go:embed roots.pem
var rootsPEM []byte

// awsRoots parses rootsPEM once: five roots, where the system's pool that
// crypto/tls loads otherwise is about 145 (2.3 ms of a 256 MB function's
// first request).
var awsRoots = sync.OnceValue(func() *x509.CertPool {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(rootsPEM) {
		panic("awsenv: roots.pem holds no certificate")
	}
	return pool
})

// Roots returns the roots that verify host's certificate: AWS's own for an
// endpoint of AWS (a host under amazonaws.com), and nil, the system's pool,
// for any other (a DynamoDB Local behind TLS, a China region's endpoint,
// whose certificates chain elsewhere), or for every host when e.SystemRoots
// (QUIRE_TLS_ROOTS=system: for a proxy that inspects TLS with a root of its
// own in the system's pool).
func (e Env) Roots(host string) *x509.CertPool {
	if e.SystemRoots || !strings.HasSuffix(strings.ToLower(host), ".amazonaws.com") {
		return nil
	}
	return awsRoots()
}

// Endpoint returns the URL of service's endpoint in e.Region, as the SDK
// resolves it when no endpoint is set: https://<service>.<region>.amazonaws.com
// (.com.cn in China's regions).
func (e Env) Endpoint(service string) string {
	domain := "amazonaws.com"
	if strings.HasPrefix(e.Region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://" + service + "." + e.Region + "." + domain
}

// warmMaxAge is how old a connection opened ahead may be when the first
// request takes it: one older (an environment Lambda initialised ahead of
// traffic and froze) may have been closed by the server while it waited,
// and a new one is dialed instead.
const warmMaxAge = 20 * time.Second

// Transport returns an HTTP transport to endpoint (a URL) whose TLS
// verifies with e.Roots, dialing with dialer and handshaking within
// handshake. It reads the roots when it first dials, not as it is built: a
// function builds its clients during init, which the roots would lengthen.
// With warm, it opens a connection to endpoint ahead of the first request,
// TLS handshake included, within the same bounds as a request's own dial,
// once StartWarmUps (or that first request) starts it: the first request
// to endpoint that needs a connection waits for that one (or for its own
// context to end) instead of dialing again, and dials as usual when it
// failed.
func (e Env) Transport(endpoint string, dialer *net.Dialer, handshake time.Duration, warm bool) *http.Transport {
	t := &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: dialer.DialContext, TLSHandshakeTimeout: handshake}
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return t
	}
	host, secure := u.Hostname(), u.Scheme == "https"
	config := sync.OnceValue(func() *tls.Config { return &tls.Config{RootCAs: e.Roots(host), MinVersion: tls.VersionTLS12} })
	if proxy, _ := t.Proxy(&http.Request{URL: u}); proxy != nil {
		// The transport handshakes through the proxy itself, with its
		// own config: nothing to open ahead.
		t.TLSClientConfig = config()
		return t
	}
	dial := dialer.DialContext
	if secure {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, dialer.Timeout+handshake)
			defer cancel()
			return (&tls.Dialer{NetDialer: dialer, Config: config()}).DialContext(ctx, network, addr)
		}
	}
	if warm {
		port := u.Port()
		if port == "" {
			port = map[bool]string{true: "443", false: "80"}[secure]
		}
		w := &warmConn{addr: net.JoinHostPort(host, port), next: dial, done: make(chan struct{})}
		WarmUp(w.start)
		dial = w.dial
	}
	if secure {
		t.DialTLSContext = dial
	} else {
		t.DialContext = dial
	}
	return t
}

// KeepConnections wraps t for an AWS SDK client so that a request's
// connection goes back to t's pool once its answer is read, whoever ran
// first. The SDK closes a request's body as soon as the answer is read, and
// that body's WriteTo then fails with io.EOF. net/http drains a body after
// writing its Content-Length bytes, with WriteTo when the body has one:
// when the answer came first (the goroutine writing the request paused
// between the two, as it may at a fraction of a CPU), it takes that EOF for
// a failed write and closes the connection, and the next request dials and
// handshakes again. A body without WriteTo ends the drain as a Read that
// returns io.EOF ends any copy.
func KeepConnections(t http.RoundTripper) http.RoundTripper { return keepConnections{t} }

type keepConnections struct{ next http.RoundTripper }

func (k keepConnections) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, ok := r.Body.(io.WriterTo); ok {
		r = r.WithContext(r.Context()) // a copy: a RoundTripper leaves its request as it was
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return k.next.RoundTrip(r)
}

// warmUps are the warm-ups that have not started.
var warmUps struct {
	sync.Mutex
	pending []func()
}

// WarmUp has start called once StartWarmUps is, warmUpDelay later: work a
// function's first request needs (a connection, a secret), begun as init
// ends. start must begin its work in the background, once however often
// it is called: a first request that needs the work before then starts it
// itself.
func WarmUp(start func()) {
	warmUps.Lock()
	warmUps.pending = append(warmUps.pending, start)
	warmUps.Unlock()
}

// warmUpDelay is how long after StartWarmUps the warm-ups start: long
// enough for the function to have asked Lambda for its first event, which
// ends its init. Started at once, beside that call, they lengthened init
// by 0.05 to 0.1 of the hello-world floor's.
const warmUpDelay = 2 * time.Millisecond

// StartWarmUps starts, warmUpDelay later, the warm-ups registered with
// WarmUp (the connections transports built to warm up open ahead among
// them): a function calls it as its init ends, as it starts serving, so
// that they do not share init's CPU, and an environment initialised ahead
// of traffic has them done before its first request.
func StartWarmUps() {
	warmUps.Lock()
	pending := warmUps.pending
	warmUps.pending = nil
	warmUps.Unlock()
	time.AfterFunc(warmUpDelay, func() {
		for _, start := range pending {
			start()
		}
	})
}

// warmConn is a connection to addr opened ahead of the first request with
// next, the transport's own dial.
type warmConn struct {
	addr    string
	next    func(ctx context.Context, network, addr string) (net.Conn, error)
	started sync.Once
	done    chan struct{} // closed once the dial has ended
	conn    net.Conn
	at      time.Time
	taken   sync.Once // the first dial of addr takes conn, or closes it
}

// start begins the dial, once.
func (w *warmConn) start() {
	w.started.Do(func() {
		go func() {
			defer close(w.done)
			w.conn, _ = w.next(context.Background(), "tcp", w.addr)
			w.at = time.Now()
		}()
	})
}

// dial is w.next, except that its first dial of w.addr takes the
// connection opened ahead, waiting for it while the dial's context lasts.
func (w *warmConn) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	first := false
	if addr == w.addr {
		w.taken.Do(func() { first = true })
	}
	if !first {
		return w.next(ctx, network, addr)
	}
	w.start()
	select {
	case <-w.done:
	case <-ctx.Done():
		go func() { // nobody takes it now
			<-w.done
			if w.conn != nil {
				w.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
	if w.conn != nil && time.Since(w.at) < warmMaxAge {
		return w.conn, nil
	}
	if w.conn != nil {
		w.conn.Close()
	}
	return w.next(ctx, network, addr)
}
