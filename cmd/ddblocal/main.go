// Command ddblocal runs a command beside fresh DynamoDB Local servers in
// memory, and stops them when it ends:
//
//	go run ./cmd/ddblocal [-n 2] go test ./...
//
// The command's DYNAMODB_ENDPOINT names the n servers, separated by
// spaces; each test binary takes one no other binary holds (see
// internal/testing/dynamotest). `make test` runs the Go tests so: two warm
// servers, one per package go test runs at a time on two cores, in place
// of a server started and warmed up by every test binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/ddblocal"
)

func main() {
	n := flag.Int("n", 2, "how many servers to start")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ddblocal [-n servers] command [args...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(*n, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
	}
	os.Exit(code)
}

// run starts n servers, runs args with their endpoints, stops the servers
// and returns the command's exit code (1 when it could not run).
func run(n int, args []string) (int, error) {
	// The servers start side by side: each JVM waits on its own start.
	servers := make([]*ddblocal.Server, n)
	starts := make([]func() error, n)
	for i := range starts {
		starts[i] = func() (err error) {
			servers[i], err = ddblocal.Start(context.Background(), ddblocal.Options{})
			return err
		}
	}
	err := quire.Concurrently(starts...)
	defer func() {
		for _, srv := range servers {
			if srv == nil {
				continue
			}
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "ddblocal:", err)
			}
		}
	}()
	if err != nil {
		return 1, err
	}
	var endpoints []string
	for _, srv := range servers {
		endpoints = append(endpoints, srv.Endpoint())
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+strings.Join(endpoints, " "))
	// Ctrl-C reaches the command too; the servers stop once it has ended.
	signal.Ignore(os.Interrupt)
	err = cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return max(exit.ExitCode(), 1), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
