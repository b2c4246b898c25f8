package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// runtimeAPI is a minimal Lambda Runtime API: it hands one event out per
// /next call and records when the function first asked and when each
// response came back.
type runtimeAPI struct {
	events    chan []byte
	asked     chan time.Time // each /next call
	responses chan result
	onNext    func() // when set, called at the first /next before the event
	nextOnce  sync.Once
}

type result struct {
	at   time.Time
	body []byte
	err  string
}

func (a *runtimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const base = "/2018-06-01/runtime/"
	switch p := strings.TrimPrefix(r.URL.Path, base); {
	case r.Method == "GET" && p == "invocation/next":
		if a.onNext != nil {
			a.nextOnce.Do(a.onNext)
		}
		a.asked <- time.Now()
		select {
		case ev := <-a.events:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", strconv.FormatInt(time.Now().UnixNano(), 36))
			w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:bench")
			w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
			w.Write(ev)
		case <-r.Context().Done():
		}
	case r.Method == "POST" && strings.HasSuffix(p, "/response"):
		body, _ := io.ReadAll(r.Body)
		a.responses <- result{at: time.Now(), body: body}
		w.WriteHeader(http.StatusAccepted)
	case r.Method == "POST" && (strings.HasSuffix(p, "/error") || p == "init/error"):
		body, _ := io.ReadAll(r.Body)
		a.responses <- result{at: time.Now(), err: string(body)}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// start serves a on a port of its own and starts argv against it with
// env. It returns the process, when it started, and what stops both.
func (a *runtimeAPI) start(ctx context.Context, argv, env []string) (*exec.Cmd, time.Time, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	srv := &http.Server{Handler: a}
	go func() { _ = srv.Serve(ln) }() // ErrServerClosed once Close stops it
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(env, "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	cmd.Stderr = os.Stderr
	started := time.Now()
	if err := cmd.Start(); err != nil {
		srv.Close()
		return nil, time.Time{}, nil, err
	}
	return cmd, started, func() {
		_ = cmd.Process.Kill() // the function measured, killed: its exit says nothing
		_ = cmd.Wait()
		srv.Close()
	}, nil
}

// coldStart is one measured cold start of a function.
type coldStart struct {
	init, cold, warm time.Duration
}

// measure starts binary against a fresh Runtime API with env, times its init
// (exec to first /next), then its first (cold) and second (warm) answer to
// event, checks both with check and stops the process. With no event, it
// stops the process once init is timed.
func measure(ctx context.Context, binary string, env []string, event []byte, check func(result) error) (coldStart, error) {
	api := &runtimeAPI{events: make(chan []byte, 1), asked: make(chan time.Time, 4), responses: make(chan result, 4)}
	_, start, stop, err := api.start(ctx, []string{binary}, env)
	if err != nil {
		return coldStart{}, err
	}
	defer stop()

	timeout := time.After(30 * time.Second)
	// next waits for the function to ask for an event.
	next := func() (time.Time, error) {
		select {
		case asked := <-api.asked:
			return asked, nil
		case res := <-api.responses:
			return time.Time{}, fmt.Errorf("%s failed at init: %s", binary, res.err)
		case <-timeout:
			return time.Time{}, fmt.Errorf("%s did not ask for an event", binary)
		}
	}
	// invoke hands the function event and returns how long it took to
	// answer.
	invoke := func() (time.Duration, error) {
		handed := time.Now()
		api.events <- event
		select {
		case res := <-api.responses:
			if err := check(res); err != nil {
				return 0, fmt.Errorf("%s: %w", binary, err)
			}
			return res.at.Sub(handed), nil
		case <-timeout:
			return 0, fmt.Errorf("%s did not answer", binary)
		}
	}
	asked, err := next()
	if err != nil || event == nil {
		return coldStart{init: asked.Sub(start)}, err
	}
	var r coldStart
	r.init = asked.Sub(start)
	if r.cold, err = invoke(); err != nil {
		return coldStart{}, err
	}
	if _, err = next(); err != nil {
		return coldStart{}, err
	}
	if r.warm, err = invoke(); err != nil {
		return coldStart{}, err
	}
	return r, nil
}

func checkOK(res result) error {
	if res.err != "" {
		return fmt.Errorf("invocation error: %s", res.err)
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(res.body, &resp); err != nil {
		return fmt.Errorf("response %q: %w", res.body, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, resp.Body)
	}
	return nil
}
