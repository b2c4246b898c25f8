package apigw

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Listener returns ln with the answers net/http's server writes itself, to
// requests it cannot read (a path with a bad escape such as "/users/%zz", a
// missing Host header, headers over the limit), made problem+json like the
// gateway's own: no handler sees those requests, so no handler can shape
// their answers. The server writes such an answer in one Write on the
// connection, as plain text that ends the connection (refusal reads it).
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

type conn struct{ net.Conn }

func (c conn) Write(b []byte) (int, error) {
	p, ok := refusal(b)
	if !ok {
		return c.Conn.Write(b)
	}
	requestID := newRequestID()
	p.RequestID = requestID
	slog.Info("gateway answered", "status", p.Status, "problem", p.Type, "detail", p.Detail, "request_id", requestID)
	body, _ := json.Marshal(p.Bounded()) // a Problem always marshals
	var w bytes.Buffer
	w.WriteString("HTTP/1.1 " + strconv.Itoa(p.Status) + " " + http.StatusText(p.Status) + "\r\n")
	for _, h := range [][2]string{
		{"Content-Type", rest.ProblemMediaType},
		{"Content-Length", strconv.Itoa(len(body))},
		{"Cache-Control", "no-store"},
		{"X-Content-Type-Options", "nosniff"},
		{"X-Amzn-Requestid", requestID},
		{"Connection", "close"},
	} {
		w.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	if _, err := c.Conn.Write(w.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// refusalHeaders are the headers of net/http's own answers to a request it
// cannot read: "HTTP/1.1 <status>" + refusalHeaders + a line of text.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// refusal reads b as net/http's answer to a request it cannot read, and
// returns its problem: its status, with the reason net/http gives when it
// gives one ("missing required Host header"). Any other bytes are not one:
// a handler's answer is written with the headers it set, in another order.
func refusal(b []byte) (rest.Problem, bool) {
	status, text, ok := strings.Cut(string(b), refusalHeaders)
	status, found := strings.CutPrefix(status, "HTTP/1.1 ")
	if !ok || !found || len(status) < 3 {
		return rest.Problem{}, false
	}
	code, err := strconv.Atoi(status[:3])
	if err != nil || code < 400 || code > 599 {
		return rest.Problem{}, false
	}
	p := rest.NewProblem(quire.EINVALID, "The request could not be read: its request line or a header is malformed. "+
		"A % in a path must begin an escape such as %25.")
	p.Status = code
	if code != http.StatusBadRequest {
		p.Detail = "The request could not be read: " + http.StatusText(code) + "."
	}
	if _, why, ok := strings.Cut(text, ": "); ok { // "400 Bad Request: missing required Host header"
		p.Detail = "The request could not be read: " + why + "."
	}
	return p, true
}
