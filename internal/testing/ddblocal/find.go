package ddblocal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotInstalled means DynamoDB Local cannot run here: its jar is not where
// Find looks, or there is no java on PATH. Errors from Find and Start wrap it
// with what is missing and how to fix it.
var ErrNotInstalled = errors.New("DynamoDB Local is not installed")

const (
	// envDir names a directory holding DynamoDBLocal.jar, in place of the
	// one the install script fills.
	envDir = "DYNAMODB_LOCAL_DIR"
	// installDir is where scripts/install-dynamodb-local.sh installs,
	// relative to the module root.
	installDir = ".cache/dynamodb-local"
	jarName    = "DynamoDBLocal.jar"
	libDir     = "DynamoDBLocal_lib"
	// launcher is the main class compiled from Loopback.java next to the
	// jar by the install script.
	launcher = "Loopback"
)

// fix says how to get a DynamoDB to test or run against.
const fix = "run `make deps` (or scripts/install-dynamodb-local.sh), or set DYNAMODB_ENDPOINT to a running DynamoDB"

// Find returns the directory holding DynamoDBLocal.jar: $DYNAMODB_LOCAL_DIR
// when it is set, else .cache/dynamodb-local under the module root, the
// nearest directory above the working directory that holds go.mod. Its
// errors wrap ErrNotInstalled and say how to install DynamoDB Local.
func Find() (dir string, err error) {
	if d := os.Getenv(envDir); d != "" {
		if !isFile(filepath.Join(d, jarName)) {
			return "", fmt.Errorf("%w: %s=%s holds no %s", ErrNotInstalled, envDir, d, jarName)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v; %s", ErrNotInstalled, err, fix)
	}
	root, ok := moduleRoot(wd)
	if !ok {
		return "", fmt.Errorf("%w: no go.mod above %s to find %s under; set %s, or %s",
			ErrNotInstalled, wd, installDir, envDir, fix)
	}
	dir = filepath.Join(root, filepath.FromSlash(installDir))
	if !isFile(filepath.Join(dir, jarName)) {
		return "", fmt.Errorf("%w: no %s in %s; %s", ErrNotInstalled, jarName, dir, fix)
	}
	return dir, nil
}

// moduleRoot returns the nearest directory at or above dir holding go.mod.
func moduleRoot(dir string) (string, bool) {
	for {
		if isFile(filepath.Join(dir, "go.mod")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
