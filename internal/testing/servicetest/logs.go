package servicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/quireapi/quire/internal/telemetry"
	"github.com/quireapi/quire/internal/testing/dynamotest"
)

// Main runs a package's tests as dynamotest.Main does and then fails the
// run if anything logged during it (every line of the functions, the
// gateway and slog's default logger, which Config sends to one sink) holds
// a secret the tests sent or received: a password, a token, or an email.
func Main(m *testing.M) {
	code := dynamotest.Run(m)
	if code == 0 {
		if found := Leaks(sink.Bytes(), secrets.list()); len(found) > 0 {
			fmt.Fprintf(os.Stderr, "servicetest: the logs hold secrets or personal data:\n")
			for _, f := range found {
				fmt.Fprintf(os.Stderr, "  %s\n", f)
			}
			code = 1
		}
	}
	os.Exit(code)
}

// Line returns the request line (see telemetry.Logger) a function wrote
// for API Gateway's request id, decoded, failing the test when there is
// not exactly one.
func Line(tb testing.TB, requestID string) map[string]any {
	tb.Helper()
	var found []map[string]any
	for _, b := range bytes.Split(sink.Bytes(), []byte("\n")) {
		if !bytes.Contains(b, []byte(requestID)) {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(b, &line); err != nil {
			tb.Fatalf("a log line is not JSON: %v: %s", err, b)
		}
		if line["msg"] == "request" && line["request_id"] == requestID {
			found = append(found, line)
		}
	}
	if len(found) != 1 {
		tb.Fatalf("%d request lines for request id %s, want 1", len(found), requestID)
	}
	return found[0]
}

// Lines returns every line logged so far, as written.
func Lines() [][]byte { return bytes.Split(bytes.TrimSpace(sink.Bytes()), []byte("\n")) }

// captureLogs makes slog's default logger, where the functions and the
// gateway write, write JSON from DEBUG up into sink while tests run.
var captureLogs = sync.OnceFunc(func() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug})))
})

var sink = &Buffer{}

// Buffer is a bytes.Buffer for concurrent writers, such as a logger's (slog's
// handlers write each line with one Write) while a test reads what it holds.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes returns a copy of what b holds.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.buf.Bytes())
}

// String returns what b holds.
func (b *Buffer) String() string { return string(b.Bytes()) }

// secrets are the passwords and tokens the tests' requests and answers
// carried.
var secrets = &secretSet{set: map[string]bool{}}

type secretSet struct {
	mu  sync.Mutex
	set map[string]bool
}

func (s *secretSet) add(v string) {
	if len(v) < 8 { // shorter ones are test inputs like "x", which any line may hold by chance
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set[v] = true
}

func (s *secretSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for v := range s.set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// note adds the secrets of a request's or an answer's JSON body, and of a
// bearer token, to secrets.
func note(body []byte, authorization string) {
	if token, ok := bytes.CutPrefix([]byte(authorization), []byte("Bearer ")); ok {
		secrets.add(string(token))
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) != nil {
		return
	}
	for _, k := range []string{"password", "current_password", "access_token", "refresh_token"} {
		if v, ok := fields[k].(string); ok {
			secrets.add(v)
		}
	}
}

// email matches an email address.
var email = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)

// Leaks returns what of secrets, and any email address, logs holds.
func Leaks(logs []byte, secrets []string) []string {
	var out []string
	for _, s := range secrets {
		if bytes.Contains(logs, []byte(s)) {
			out = append(out, fmt.Sprintf("a password or token the tests used (%.6s...)", s))
		}
	}
	for _, m := range email.FindAll(logs, 5) {
		out = append(out, fmt.Sprintf("an email address: %s", m))
	}
	return out
}

// namespace is the metrics' namespace in tests.
const namespace = telemetry.DefaultNamespace
