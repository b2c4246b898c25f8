package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/awsenvtest"
)

// The cold request as deployed: what a user waits for from a new instance,
// its first answer (exec to the response to an event queued before it
// starts, as an on-demand cold start finds it), at its memory's share of a
// CPU, over TLS to DynamoDB.
const (
	deployedRuns = 21
	// warmRequests is how many warm requests follow a function's first,
	// counting the connections they open.
	warmRequests = 200
	// lambdaFullCPU is the memory at which Lambda gives a function a whole
	// vCPU; below it, its share is memory / lambdaFullCPU.
	lambdaFullCPU = 1769
	// quotaPeriod spreads the share over periods of 20 ms: a cold start
	// that needs more CPU than one period's share waits for the next.
	quotaPeriod = 20 * time.Millisecond
	// systemBundle is Debian's bundle of the system's roots (145), about
	// Amazon Linux 2023's.
	systemBundle = "/etc/ssl/certs/ca-certificates.crt"
	maxColdRatio = 1.5
	maxFirstCPU  = 3 * time.Millisecond
	// How a function runs: asDeployed, as one that calls DynamoDB is
	// deployed; health also with the system's roots and over plain HTTP,
	// and the floor over plain HTTP, to show where the time goes.
	asDeployed  = "as deployed: AWS's roots; connects as init ends"
	systemRoots = "the system's roots"
	plainHTTP   = "plain HTTP: no handshake"
	floorPlain  = "plain HTTP: the runtime and the SDK alone"
)

// deployedRow is one function's cold requests as deployed.
type deployedRow struct {
	name, how string
	memoryMB  int
	first     []time.Duration // exec to first answer
	cpu       []time.Duration // the process's CPU from its first /next to its answer
	newConns  int             // connections warmRequests more requests opened; -1 when not counted
}

// deployedVariant is a way of running a function in the deployed measure.
type deployedVariant struct {
	row    *deployedRow
	binary string
	env    []string
	event  []byte
	check  func(result) error
}

// coldAsDeployed measures each function with an event, and the floor
// (hellodb), as deployed: Quire's functions trust the roots of AWS's
// endpoints (a bundle of AWS's five and the TLS front's own root, as the
// function's embedded pool holds AWS's five), the floor the system's pool
// (a bundle of the system's roots and the front's). To show where the first
// request's time goes, the floor runs again over plain HTTP (the runtime
// and the SDK), and the health function, whose route makes one GetItem,
// twice more: with the system's pool, and over plain HTTP. It returns the
// rows, and how the CPU share was applied.
func coldAsDeployed(ctx context.Context, fns []*function, floor *function, endpoint string, env []string) ([]*deployedRow, string, error) {
	dir, err := os.MkdirTemp("", "quire-deployed")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	front, caPEM, err := tlsFront(endpoint)
	if err != nil {
		return nil, "", err
	}
	defer front.Close()
	awsRoots, err := os.ReadFile("internal/awsenv/roots.pem")
	if err != nil {
		return nil, "", err
	}
	system, err := os.ReadFile(systemBundle)
	if err != nil {
		return nil, "", err
	}
	noDir := filepath.Join(dir, "no-certs")
	if err := os.Mkdir(noDir, 0o755); err != nil {
		return nil, "", err
	}
	bundles := map[string]string{}
	for name, roots := range map[string][]byte{"aws": awsRoots, "system": system} {
		bundles[name] = filepath.Join(dir, name+".pem")
		if err := os.WriteFile(bundles[name], append(append(roots, '\n'), caPEM...), 0o644); err != nil {
			return nil, "", err
		}
	}
	with := func(roots, endpoint string) []string {
		out := make([]string, 0, len(env)+3)
		for _, kv := range env {
			if !strings.HasPrefix(kv, "DYNAMODB_ENDPOINT=") {
				out = append(out, kv)
			}
		}
		return append(out, "DYNAMODB_ENDPOINT="+endpoint, "SSL_CERT_FILE="+bundles[roots], "SSL_CERT_DIR="+noDir)
	}
	secure := "https://" + front.Listener.Addr().String()

	var variants []deployedVariant
	add := func(f *function, name, how string, memoryMB int, env []string) {
		row := &deployedRow{name: name, how: how, memoryMB: memoryMB, newConns: -1}
		variants = append(variants, deployedVariant{row: row, binary: f.binary, env: env, event: f.event, check: f.check})
	}
	add(floor, floor.name, "the system's roots; connects on its first request", 256, with("system", secure))
	add(floor, floor.name, floorPlain, 256, with("system", endpoint))
	for _, f := range fns {
		if f.event == nil || f.name == floorFunction || f.name == hookName {
			continue
		}
		memory := routes.AuthorizerMemoryMB
		for _, g := range routes.Groups() {
			if g.Name == f.name {
				memory = g.MemoryMB
			}
		}
		how := asDeployed
		if f.name == "authorizer" {
			how = "as deployed: calls no AWS service"
		}
		add(f, f.name, how, memory, with("aws", secure))
		if f.name == routes.GroupHealth {
			add(f, f.name, systemRoots, memory, with("system", secure))
			add(f, f.name, plainHTTP, memory, with("aws", endpoint))
		}
	}

	quota, how := newCPUQuota(dir)
	defer quota.close()
	for range deployedRuns {
		for _, v := range variants {
			argv, err := quota.wrap(v.row.memoryMB, v.binary)
			if err != nil {
				return nil, "", err
			}
			first, cpu, err := firstAnswer(ctx, argv, v.env, v.event, v.check)
			if err != nil {
				return nil, "", fmt.Errorf("%s (%s): %w", v.row.name, v.row.how, err)
			}
			v.row.first, v.row.cpu = append(v.row.first, first), append(v.row.cpu, cpu)
		}
	}
	rows := make([]*deployedRow, len(variants))
	for i, v := range variants {
		rows[i] = v.row
		if v.row.how != asDeployed {
			continue
		}
		argv, err := quota.wrap(v.row.memoryMB, v.binary)
		if err != nil {
			return nil, "", err
		}
		if v.row.newConns, err = warmConnections(ctx, argv, v.env, v.event, v.check, front); err != nil {
			return nil, "", fmt.Errorf("%s (warm connections): %w", v.row.name, err)
		}
	}
	return rows, how, nil
}

// warmConnections starts argv against a fresh Runtime API, sends it event,
// then warmRequests more one after another, checking each answer, and
// returns how many connections to front the warm ones opened. It counts
// from the first answer, once the connection the function opens as its
// init ends is open: a route that calls no DynamoDB (auth's JWKS) may
// answer before it is.
func warmConnections(ctx context.Context, argv, env []string, event []byte, check func(result) error, front *httpsServer) (int, error) {
	api := &runtimeAPI{events: make(chan []byte, 1), asked: make(chan time.Time, warmRequests+2), responses: make(chan result, 1)}
	_, _, stop, err := api.start(ctx, argv, env)
	if err != nil {
		return 0, err
	}
	defer stop()
	invoke := func(n int) error {
		api.events <- event
		select {
		case res := <-api.responses:
			return check(res)
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s did not answer request %d", argv, n)
		}
	}
	start := front.conns.Load()
	if err := invoke(1); err != nil {
		return 0, err
	}
	for front.conns.Load() == start {
		select {
		case <-front.opened:
		case <-time.After(5 * time.Second):
			return 0, fmt.Errorf("%s opened no connection ahead", argv)
		}
	}
	before := front.conns.Load()
	for n := range warmRequests {
		if err := invoke(n + 2); err != nil {
			return 0, err
		}
	}
	return int(front.conns.Load() - before), nil
}

// tlsFront serves endpoint over TLS on a loopback port, with a certificate
// of a root of its own, which it returns in PEM.
func tlsFront(endpoint string) (*httpsServer, []byte, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, nil, err
	}
	ca, err := awsenvtest.NewCA("Quire bench root")
	if err != nil {
		return nil, nil, err
	}
	cert, err := ca.Certificate("127.0.0.1")
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	front := &httpsServer{Listener: ln, opened: make(chan struct{}, 1)}
	front.Server = &http.Server{
		Handler:   httputil.NewSingleHostReverseProxy(target),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ConnState: func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				front.conns.Add(1)
				select {
				case front.opened <- struct{}{}:
				default:
				}
			}
		},
	}
	go func() { _ = front.ServeTLS(ln, "", "") }() // ErrServerClosed once Close stops it
	return front, ca.PEM, nil
}

// httpsServer is the TLS front, counting the connections it accepts.
type httpsServer struct {
	*http.Server
	Listener net.Listener
	conns    atomic.Int64
	opened   chan struct{} // a token for each connection accepted, while none waits
}

// cpuQuota runs processes in a CPU cgroup per memory size, whose quota is
// that memory's share of a CPU (cgroup v1's cpu controller, or v2's), or
// runs them as they are where the machine has neither writable.
type cpuQuota struct {
	dir    string         // the cgroup controller's folder; "" for none
	v2     bool           // cpu.max rather than cpu.cfs_*
	groups map[int]string // memory → the group's folder
}

func newCPUQuota(tmp string) (*cpuQuota, string) {
	q := &cpuQuota{groups: map[int]string{}}
	for _, c := range []struct {
		dir string
		v2  bool
	}{{"/sys/fs/cgroup/cpu", false}, {"/sys/fs/cgroup", true}} {
		probe := filepath.Join(c.dir, fmt.Sprintf("quire-bench-%d-probe", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil {
			continue
		}
		file := "cpu.cfs_quota_us"
		if c.v2 {
			file = "cpu.max"
		}
		_, err := os.Stat(filepath.Join(probe, file))
		_ = os.Remove(probe)
		if err == nil {
			q.dir, q.v2 = c.dir, c.v2
			return q, fmt.Sprintf("in a CPU cgroup of its memory's share of a CPU (memory / %d MB), over %v periods", lambdaFullCPU, quotaPeriod)
		}
	}
	return q, "at the machine's full CPU: it has no CPU cgroup this command may create, so the share is not applied and the figures are low"
}

// wrap returns the command line that runs binary in memoryMB's group: a
// shell that moves itself into the group, then becomes binary.
func (q *cpuQuota) wrap(memoryMB int, binary string) ([]string, error) {
	if q.dir == "" {
		return []string{binary}, nil
	}
	group, ok := q.groups[memoryMB]
	if !ok {
		group = filepath.Join(q.dir, fmt.Sprintf("quire-bench-%d-%dmb", os.Getpid(), memoryMB))
		if err := os.Mkdir(group, 0o755); err != nil {
			return nil, err
		}
		period := quotaPeriod.Microseconds()
		quota := period * int64(memoryMB) / lambdaFullCPU
		var err error
		if q.v2 {
			err = os.WriteFile(filepath.Join(group, "cpu.max"), fmt.Appendf(nil, "%d %d", quota, period), 0o644)
		} else if err = os.WriteFile(filepath.Join(group, "cpu.cfs_period_us"), []byte(strconv.FormatInt(period, 10)), 0o644); err == nil {
			err = os.WriteFile(filepath.Join(group, "cpu.cfs_quota_us"), []byte(strconv.FormatInt(quota, 10)), 0o644)
		}
		if err != nil {
			_ = os.Remove(group)
			return nil, fmt.Errorf("CPU quota of %d MB: %w", memoryMB, err)
		}
		q.groups[memoryMB] = group
	}
	return []string{"/bin/sh", "-c", `echo $$ > "$1" && exec "$0"`, binary, filepath.Join(group, "cgroup.procs")}, nil
}

func (q *cpuQuota) close() {
	for _, g := range q.groups {
		_ = os.Remove(g)
	}
}

// firstAnswer starts argv against a fresh Runtime API with event queued,
// and returns the time from exec to its answer, and the CPU the process
// spent from its first /next to the answer.
func firstAnswer(ctx context.Context, argv, env []string, event []byte, check func(result) error) (time.Duration, time.Duration, error) {
	api := &runtimeAPI{events: make(chan []byte, 1), asked: make(chan time.Time, 4), responses: make(chan result, 4)}
	var pid int
	var atNext time.Duration
	api.onNext = func() { atNext = cpuOf(pid) }
	api.events <- event
	cmd, start, stop, err := api.start(ctx, argv, env)
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	pid = cmd.Process.Pid
	select {
	case <-api.asked:
	case <-time.After(30 * time.Second):
		return 0, 0, fmt.Errorf("%s did not ask for an event", argv)
	}
	select {
	case res := <-api.responses:
		cpu := cpuOf(pid) - atNext
		if err := check(res); err != nil {
			return 0, 0, err
		}
		return res.at.Sub(start), cpu, nil
	case <-time.After(30 * time.Second):
		return 0, 0, fmt.Errorf("%s did not answer", argv)
	}
}

// cpuOf returns the CPU time process pid has spent, in all its threads:
// the sum of their schedstat's first field, in nanoseconds.
func cpuOf(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}

// printDeployed writes the cold requests as deployed.
func printDeployed(w io.Writer, rows []*deployedRow, how string) {
	fmt.Fprintf(w, "\n## The cold request as deployed\n\nWhat a user waits for from a new instance: the time from exec to its first answer. "+
		"The event is queued before the process starts, as an on-demand cold start finds it. Each runs under the Runtime "+
		"API emulator, %s. It calls DynamoDB Local through a TLS front whose certificate chains to a root of its own. "+
		"The process loads that root with the roots it trusts: AWS's five for Quire's functions, as their embedded pool "+
		"holds them, and the system's %s for the floor, a plain SDK function making one GetItem. Medians of %d starts "+
		"each, the functions by turns. First request CPU is the process's CPU from its first call for an event to its "+
		"answer. New connections: what %d more requests, one after another, open to the front after a started "+
		"process's first, at the same share.\n\n", how, systemBundle, deployedRuns, warmRequests)
	fmt.Fprintf(w, "| function | memory | how | first answer | / floor | first request CPU | new connections in %d warm requests |\n", warmRequests)
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|")
	floor := median(rows[0].first)
	for _, r := range rows {
		ratio, cpu := float64(median(r.first))/float64(floor), ms(median(r.cpu))
		ratioMark, cpuMark := "", ""
		if strings.HasPrefix(r.how, "as deployed") {
			ratioMark = " " + mark(ratio <= maxColdRatio)
			if r.name == routes.GroupHealth {
				cpuMark = " " + mark(median(r.cpu) <= maxFirstCPU)
			}
		}
		conns := ""
		if r.newConns >= 0 {
			conns = fmt.Sprintf("%d %s", r.newConns, mark(r.newConns == 0))
		}
		fmt.Fprintf(w, "| %s | %d MB | %s | %s | %.2fx%s | %s%s | %s |\n", r.name, r.memoryMB, r.how, ms(median(r.first)), ratio, ratioMark, cpu, cpuMark, conns)
	}
	cpu := func(name, how string) time.Duration {
		for _, r := range rows {
			if r.name == name && r.how == how {
				return median(r.cpu)
			}
		}
		return 0
	}
	sdk, health := cpu(rows[0].name, floorPlain), routes.GroupHealth
	fmt.Fprintf(w, "\nWhere health's first request CPU goes, from the medians above: %s for the runtime and one GetItem through "+
		"the SDK (the floor over plain HTTP); %s for health's own handling beyond that (health over plain HTTP, less the "+
		"floor's); %s for the connection, its TLS handshake and AWS's roots (as deployed, less plain HTTP); %s more to "+
		"load the system's roots instead (the system's roots, less as deployed).\n",
		ms(sdk), ms(cpu(health, plainHTTP)-sdk), ms(cpu(health, asDeployed)-cpu(health, plainHTTP)),
		ms(cpu(health, systemRoots)-cpu(health, asDeployed)))
	fmt.Fprintf(w, "\nTargets: each function's first answer within %.1fx the floor's; the first request's CPU of a route that makes one "+
		"GetItem (health's) at most %s; no new connection in warm requests to an unchanged endpoint.\n", maxColdRatio, ms(maxFirstCPU))
}
