package ddblocal

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/internal/dynamo"
)

// mustStart starts DynamoDB Local for one test and stops it when the test ends.
// It skips the test when DynamoDB Local is not installed, and fails it
// instead when QUIRE_REQUIRE_DYNAMODB_LOCAL=1 (make test).
func mustStart(t *testing.T, opts Options) *Server {
	t.Helper()
	begin := time.Now()
	s, err := Start(t.Context(), opts)
	if errors.Is(err, ErrNotInstalled) && os.Getenv("QUIRE_REQUIRE_DYNAMODB_LOCAL") != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DynamoDB Local answered after %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestInMemory starts one server in memory, the way make run and the tests
// start it: it starts empty, answers this machine alone, and stops.
func TestInMemory(t *testing.T) {
	t.Parallel() // beside TestDataDirKeepsTables: each waits for its JVM
	s := mustStart(t, Options{})
	t.Run("starts empty", func(t *testing.T) {
		out, err := newClient(t, s.Endpoint()).ListTables(t.Context(), &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.TableNames) != 0 {
			t.Errorf("a new in-memory server has tables %q", out.TableNames)
		}
	})
	t.Run("not reachable from outside", func(t *testing.T) { notReachableFromOutside(t, s) })
	t.Run("stops", func(t *testing.T) { stops(t, s) })
}

// notReachableFromOutside: the tables of `make run` (password hashes among
// them) are no one else's to read. The server refuses a connection to any
// address of this machine but 127.0.0.1, and a browser's preflight from any
// page.
func notReachableFromOutside(t *testing.T, s *Server) {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.Endpoint(), "http://"))
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), 2*time.Second); err == nil {
			c.Close()
			t.Errorf("DynamoDB Local answers on %s, port %s: want 127.0.0.1 only", ip.IP, port)
		}
	}
	if tried == 0 {
		t.Log("this machine has no address but loopback to try")
	}

	req, err := http.NewRequestWithContext(t.Context(), http.MethodOptions, s.Endpoint()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://any.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,x-amz-target,authorization")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("a preflight from a page: %s with Access-Control-Allow-Origin %q, want none", resp.Status, got)
	}
	// A request a page may send without a preflight: its answer must not
	// be readable by the page either.
	simple, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.Endpoint()+"/", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	simple.Header.Set("Origin", "https://any.example")
	simple.Header.Set("Content-Type", "text/plain")
	if resp, err = http.DefaultClient.Do(simple); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("a simple request from a page: %s with Access-Control-Allow-Origin %q, want none", resp.Status, got)
	}
}

// stops: a started server answers at its endpoint, and after Stop its JVM
// is gone and waited for, its port closed; a second Stop does nothing.
func stops(t *testing.T, s *Server) {
	if !strings.HasPrefix(s.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("Endpoint() = %q, want http://127.0.0.1:<port>", s.Endpoint())
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if err := ping(t.Context(), client, s.Endpoint()); err != nil {
		t.Fatalf("ListTables on a started server: %v", err)
	}

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s.cmd.ProcessState == nil {
		t.Errorf("after Stop, the JVM (pid %d) has not been waited for", s.cmd.Process.Pid)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(s.cmd.Process.Pid)); err == nil {
		t.Errorf("after Stop, process %d still exists", s.cmd.Process.Pid)
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.Endpoint(), "http://"), time.Second); err == nil {
		c.Close()
		t.Errorf("after Stop, %s still accepts connections", s.Endpoint())
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestDataDirKeepsTables(t *testing.T) {
	t.Parallel() // beside TestInMemory: each waits for its JVMs
	data := filepath.Join(t.TempDir(), "data")
	names := dynamo.PrefixedTableNames("persist_")

	s := mustStart(t, Options{DataDir: data})
	db := newClient(t, s.Endpoint())
	if err := dynamo.CreateTables(t.Context(), db, names); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s = mustStart(t, Options{DataDir: data})
	out, err := newClient(t, s.Endpoint()).ListTables(t.Context(), &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !slices.Contains(out.TableNames, name) {
			t.Errorf("after a restart on the same DataDir, tables are %q, want %q among them", out.TableNames, name)
		}
	}
}

func newClient(t *testing.T, endpoint string) *dynamodb.Client {
	t.Helper()
	db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// brokenInstall returns a directory with a jar and a launcher that are not.
func brokenInstall(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{jarName, launcher + ".class"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not a "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestStartReportsEarlyExit(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH")
	}
	dir := brokenInstall(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := Start(ctx, Options{Dir: dir})
	if err == nil {
		t.Fatal("Start with a broken jar succeeded")
	}
	if !strings.Contains(err.Error(), "exited before answering") || !strings.Contains(err.Error(), launcher) {
		t.Errorf("Start with a broken install: %v\nwant the exit and java's complaint about the main class", err)
	}
}

func TestStartPortInUse(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH")
	}
	dir := brokenInstall(t)
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(t.Context(), Options{Dir: dir, Port: port})
	if !errors.Is(err, errPortInUse) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Errorf("Start on a busy port: %v, want an error naming port %d as in use", err, port)
	}
}

func TestFind(t *testing.T) {
	t.Run("env names an empty dir", func(t *testing.T) {
		t.Setenv(envDir, t.TempDir())
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), envDir) {
			t.Errorf("Find() error = %v, want ErrNotInstalled naming %s", err, envDir)
		}
	})
	t.Run("env names an install", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, jarName), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv(envDir, dir)
		got, err := Find()
		if err != nil || got != dir {
			t.Errorf("Find() = %q, %v; want %q", got, err, dir)
		}
	})
	t.Run("module without install", func(t *testing.T) {
		t.Setenv(envDir, "")
		root := t.TempDir()
		sub := filepath.Join(root, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(sub)
		_, err := Find()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "make deps") ||
			!strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") {
			t.Errorf("Find() error = %v, want ErrNotInstalled saying to run make deps or set DYNAMODB_ENDPOINT", err)
		}
	})
	t.Run("module with install", func(t *testing.T) {
		t.Setenv(envDir, "")
		root := t.TempDir()
		dir := filepath.Join(root, ".cache", "dynamodb-local")
		sub := filepath.Join(root, "internal", "x")
		for _, d := range []string{dir, sub} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{filepath.Join(root, "go.mod"), filepath.Join(dir, jarName)} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Chdir(sub)
		got, err := Find()
		if err != nil || got != dir {
			t.Errorf("Find() = %q, %v; want %q", got, err, dir)
		}
	})
}
