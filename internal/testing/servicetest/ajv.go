package servicetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// ajv holds values to the document with ajv.mjs, ajv in its default
// configuration in Node: the validator a JavaScript client reads the
// document with, beside kin-openapi. A nil *ajv checks nothing: Node or
// ajv is not installed (ajvMissing says which), and go test alone does not
// need them; `make test` does (QUIRE_REQUIRE_NODE=1).
type ajv struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Reader
}

// ajvMissing says why ajv does not run here, or is "" when it does.
var ajvMissing = sync.OnceValue(func() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH"
	}
	root, err := moduleRoot()
	if err != nil {
		return err.Error()
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "ajv", "package.json")); err != nil {
		return "ajv is not installed in node_modules (make deps installs it)"
	}
	return ""
})

// startAjv starts ajv.mjs over the document doc, or returns nil when it
// cannot run here and need not.
func startAjv(doc []byte) (*ajv, error) {
	if why := ajvMissing(); why != "" {
		if os.Getenv("QUIRE_REQUIRE_NODE") == "1" {
			return nil, fmt.Errorf("QUIRE_REQUIRE_NODE=1, and ajv cannot run: %s", why)
		}
		return nil, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(root, "internal", "testing", "servicetest", "ajv.mjs"))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The process ends with the test binary, when its stdin closes.
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if _, err := in.Write(append(bytes.ReplaceAll(doc, []byte("\n"), nil), '\n')); err != nil {
		return nil, err
	}
	return &ajv{in: in, out: bufio.NewReader(out)}, nil
}

// check returns ajv's errors when value, a JSON text, is not valid against
// schema, or nil; with no schema, there is nothing to check.
func (a *ajv) check(schema *openapi3.SchemaRef, value []byte) error {
	if a == nil || schema == nil {
		return nil
	}
	var line bytes.Buffer
	if err := json.Compact(&line, value); err != nil {
		return err
	}
	req, err := json.Marshal(struct {
		Schema *openapi3.SchemaRef `json:"schema"`
		Value  json.RawMessage     `json:"value"`
	}{schema, line.Bytes()})
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.in.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("ajv: %w", err)
	}
	answer, err := a.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("ajv: %w", err)
	}
	if answer = strings.TrimSuffix(answer, "\n"); answer != "" {
		return fmt.Errorf("ajv (default configuration) refuses %.300s: %s", value, answer)
	}
	return nil
}

// startDir is the working directory the test binary started in, its
// package's, before a test changes it.
var startDir, startDirErr = os.Getwd()

// moduleRoot returns the folder of Quire's go.mod, above the package
// under test.
func moduleRoot() (string, error) {
	if startDirErr != nil {
		return "", startDirErr
	}
	dir := startDir
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/quireapi/quire\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/quireapi/quire above the working directory")
		}
		dir = parent
	}
}
