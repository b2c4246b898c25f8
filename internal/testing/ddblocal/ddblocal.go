// Package ddblocal starts and stops DynamoDB Local, AWS's DynamoDB for a
// developer's machine: a Java program that scripts/install-dynamodb-local.sh
// installs into .cache/dynamodb-local. The integration tests (through
// internal/testing/dynamotest) and `make run` use it.
//
// Start returns once the server answers a ListTables call: about 0.9 s after
// it launches the JVM on a 2-CPU machine with a warm disk cache, 3 to 4 s
// with a cold one. Stop takes about 0.4 s. The server listens on 127.0.0.1
// only (through Loopback.java: DynamoDB Local itself has no option for it),
// answers no browser (CORS off), and uses one database for all credentials
// and regions (-sharedDb).
package ddblocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options says how to run DynamoDB Local. The zero value runs the installed
// one in memory on a free port.
type Options struct {
	// Dir holds DynamoDBLocal.jar and DynamoDBLocal_lib; "" means Find().
	Dir string
	// Port to listen on; 0 picks a free one.
	Port int
	// DataDir keeps the tables on disk in this directory, created if
	// missing, across restarts; "" keeps them in memory until Stop.
	DataDir string
	// Stdout and Stderr receive the server's output when set.
	Stdout, Stderr io.Writer
}

// Server is a running DynamoDB Local.
type Server struct {
	cmd      *exec.Cmd
	port     int
	stderr   *tail
	done     chan struct{} // closed once the process has exited
	waitErr  error         // the process's exit, set before done is closed
	stopOnce sync.Once
	stopErr  error
}

const (
	// startTimeout bounds how long Start waits for the server to answer.
	startTimeout = 30 * time.Second
	// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
	// portRetries is how many more ports Start tries when another process
	// took the free port it picked before the JVM bound it.
	portRetries = 3
)

// errPortInUse marks a server that could not bind its port.
var errPortInUse = errors.New("port in use")

// Start runs DynamoDB Local and waits until it answers, for at most 30 s or
// until ctx is done; the server then outlives ctx until Stop. It returns an
// error wrapping ErrNotInstalled when the jar or java is missing, and an
// error quoting the server's last output when it exits or does not answer
// in time.
func Start(ctx context.Context, opts Options) (*Server, error) {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = Find(); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{jarName, launcher + ".class"} {
		if !isFile(filepath.Join(dir, f)) {
			return nil, fmt.Errorf("start DynamoDB Local: %w: no %s in %s; %s", ErrNotInstalled, f, dir, fix)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w: it needs Java 17 or later on PATH (%v), or set DYNAMODB_ENDPOINT to a running DynamoDB",
			ErrNotInstalled, err)
	}
	args := []string{
		// The C1 compiler alone and the serial collector start the server
		// in 0.9 s instead of 1.1 to 1.5 s, and make its first requests
		// faster: right for a database that lives as long as a test run.
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Djava.library.path=" + filepath.Join(dir, libDir),
		"-cp", filepath.Join(dir, jarName) + string(filepath.ListSeparator) + dir, launcher,
		// It would send usage data to AWS otherwise.
		"-disableTelemetry",
		// No origin may call it from a browser: its default is every one.
		"-cors", "",
	}
	// It writes a dynamodb-local-metadata.json into its working directory:
	// the data directory, or the install directory when in memory.
	workDir := dir
	if opts.DataDir == "" {
		args = append(args, "-inMemory", "-sharedDb")
	} else {
		data, err := filepath.Abs(opts.DataDir)
		if err == nil {
			err = os.MkdirAll(data, 0o755)
		}
		if err != nil {
			return nil, fmt.Errorf("start DynamoDB Local: data directory: %w", err)
		}
		args = append(args, "-dbPath", data, "-sharedDb")
		workDir = data
	}

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, fmt.Errorf("start DynamoDB Local: pick a port: %w", err)
			}
		} else if err := portFree(port); err != nil {
			return nil, fmt.Errorf("start DynamoDB Local: port %d: %w", port, err)
		}
		s, err := start(ctx, java, slices.Concat(args, []string{"-port", strconv.Itoa(port)}), port, workDir, opts)
		if err == nil {
			return s, nil
		}
		if opts.Port != 0 || !errors.Is(err, errPortInUse) || attempt == portRetries {
			return nil, fmt.Errorf("start DynamoDB Local: %w", err)
		}
	}
}

// start launches the JVM and waits until it answers on port.
func start(ctx context.Context, java string, args []string, port int, dir string, opts Options) (*Server, error) {
	s := &Server{port: port, stderr: &tail{}, done: make(chan struct{})}
	s.cmd = exec.Command(java, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout = opts.Stdout
	s.cmd.Stderr = s.stderr
	if opts.Stderr != nil {
		s.cmd.Stderr = io.MultiWriter(s.stderr, opts.Stderr)
	}
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", java, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// waitReady polls the server with ListTables until it answers 200, the
// process exits, or ctx is done.
func (s *Server) waitReady(ctx context.Context) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-s.done:
			err := fmt.Errorf("DynamoDB Local exited before answering (%v)%s", s.waitErr, s.stderr.quote())
			// DynamoDB Local exits with status 0 when its port is taken.
			if strings.Contains(s.stderr.String(), "Address already in use") {
				err = fmt.Errorf("%w: %w", errPortInUse, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("DynamoDB Local did not answer on port %d (%w; last: %v)%s",
				s.port, context.Cause(ctx), last, s.stderr.quote())
		case <-tick.C:
		}
		if last = ping(ctx, client, s.Endpoint()); last == nil {
			select {
			case <-s.done: // answered by another server, on the port ours lost
				continue
			default:
				return nil
			}
		}
	}
}

// ping makes the ListTables call that says DynamoDB Local is ready.
// DynamoDB Local wants a signature-shaped Authorization header, not a valid
// signature.
func ping(ctx context.Context, client *http.Client, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ListTables: %s", resp.Status)
	}
	return nil
}

// Endpoint returns the server's URL, "http://127.0.0.1:<port>", for
// dynamo.Config.Endpoint or DYNAMODB_ENDPOINT.
func (s *Server) Endpoint() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Stop ends the server: SIGTERM, then SIGKILL if it has not exited 5 s
// later. In-memory tables are gone afterwards. It returns an error only
// when the process cannot be signalled; calling it again does nothing.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := terminate(s.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop DynamoDB Local: %w", err)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-s.done:
		return nil
	case <-timer.C:
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop DynamoDB Local: %w", err)
	}
	<-s.done
	return nil
}

// freePort returns a TCP port nothing listens on, on any address.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portFree returns an error when something listens on port.
func portFree(port int) error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("%w (%w)", errPortInUse, err)
	}
	return l.Close()
}

// tail keeps the end of what a process writes, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// quote returns the last lines written, indented, after a colon; or "".
func (t *tail) quote() string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	var b bytes.Buffer
	b.WriteString("; its output ends:")
	for _, l := range lines {
		b.WriteString("\n\t")
		b.WriteString(strings.TrimRight(l, "\r"))
	}
	return b.String()
}
