package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/quireapi/quire/docs/markdown"
	"github.com/quireapi/quire/internal/api"
	"github.com/quireapi/quire/internal/awsenv"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/testing/ddblocal"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// make run listens on loopback unless HOST says otherwise.
func TestListen(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		loopback bool
	}{
		{map[string]string{"PORT": "0"}, true},
		{map[string]string{"PORT": "0", "HOST": "0.0.0.0"}, false},
	} {
		ln, err := listen(func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		ip := ln.Addr().(*net.TCPAddr).IP
		ln.Close()
		if ip.IsLoopback() != c.loopback {
			t.Errorf("%v: listens on %v, want loopback %v", c.env, ip, c.loopback)
		}
	}
}

// A name of ALLOWED_HOSTS that is no host stops make run at once.
func TestAllowedHostsInvalid(t *testing.T) {
	env := map[string]string{"PORT": "0", "ALLOWED_HOSTS": "localhost,http://shop.example"}
	err := run(t.Context(), func(k string) string { return env[k] }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ALLOWED_HOSTS") || !strings.Contains(err.Error(), "http://shop.example") {
		t.Errorf("run = %v, want an error naming ALLOWED_HOSTS and the name", err)
	}
}

// textLine is a line of slog's text handler.
var textLine = regexp.MustCompile(`^time=\S+ level=(DEBUG|INFO|WARN|ERROR) msg=`)

// TestRun serves the API as `make run` does, in each log format: with its
// own DynamoDB Local in text, on the test binary's in JSON. Every line it
// prints is in that format, from the first step to the last request; it prints the demo accounts, the refresh
// token included; the address it prints leads a browser to the docs page;
// a HEAD request is logged under its route; a request of no route (a path
// or a query with a bad escape, OPTIONS *) gets problem+json too; and it
// answers the hosts it serves alone.
func TestRun(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each format, without DynamoDB Local
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var env []string
			if format == "text" {
				ownDynamoDB(t)
			} else {
				env = onTables(t)
			}
			lines := serve(t, format, func(url string) {
				client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := client.Get(url + "/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/docs" {
					t.Errorf("GET %s/ = %d to %q, want 302 to the docs page, /docs", url, resp.StatusCode, resp.Header.Get("Location"))
				}
				if resp, err = client.Head(url + "/landing"); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				for _, tc := range []struct {
					request string
					status  int
				}{
					{"GET /users/%zz", http.StatusBadRequest},
					{"GET /products?cursor=%%%", http.StatusBadRequest},
					{"OPTIONS *", http.StatusNotFound},
				} {
					resp := raw(t, url, "", tc.request)
					if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
						resp.Header.Get("X-Content-Type-Options") != "nosniff" {
						t.Errorf("%s = %d %v, want %d problem+json with nosniff", tc.request, resp.StatusCode, resp.Header, tc.status)
					}
				}
				// It answers the hosts it serves alone, whose links and
				// redirects name them.
				port := url[strings.LastIndex(url, ":"):]
				for host, want := range map[string]int{"localhost" + port: 200, "shop.example" + port: 200, "evil.example" + port: 400, "localhost": 400} {
					resp := raw(t, url, host, "GET /health")
					if ctype := resp.Header.Get("Content-Type"); resp.StatusCode != want || want == 400 && ctype != "application/problem+json" {
						t.Errorf("GET /health for Host %s = %d %s, want %d", host, resp.StatusCode, ctype, want)
					}
				}
			}, append(env, "ALLOWED_HOSTS", "shop.example")...)
			ready, demoAccounts, head := map[string]any{}, 0, false
			for _, line := range lines {
				var rec map[string]any
				if format == "json" {
					if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["msg"] == nil || rec["level"] == nil {
						t.Errorf("a line that is not slog's JSON: %s", line)
						continue
					}
				} else {
					if !textLine.MatchString(line) {
						t.Errorf("a line that is not slog's text: %s", line)
						continue
					}
					if rec = parseText(line); rec == nil {
						t.Errorf("a line this test cannot read: %s", line)
						continue
					}
				}
				switch {
				case strings.HasPrefix(rec["msg"].(string), "Quire is ready"):
					ready = rec
				case rec["msg"] == "demo account":
					demoAccounts++
					if rec["role"] == "customer" && rec["refresh_token"] != demo.CustomerRefreshToken {
						t.Errorf("the demo customer's line has no refresh token: %s", line)
					}
				case rec["msg"] == "request" && rec["route"] == "HEAD /landing":
					head = true
				}
			}
			if ready["url"] == nil || ready["docs"] != ready["url"].(string)+"/docs" {
				t.Errorf("the ready line names no address and docs page: %v", ready)
			}
			if demoAccounts != 2 {
				t.Errorf("%d demo accounts printed, want the admin and the customer", demoAccounts)
			}
			if !head {
				t.Errorf("no request line with route \"HEAD /landing\" in:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

// raw sends request, a method and a target, for host (url's when "") to
// the server at url as it is, bytes no client library would send, and
// returns the answer.
func raw(t *testing.T, url, host, request string) *http.Response {
	addr := strings.TrimPrefix(url, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: %s\r\n\r\n", request, cmp.Or(host, addr))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// ownDynamoDB runs the rest of the test in a directory of its own, where
// the server writes build/sam-env.json, with the installed DynamoDB Local,
// which the server starts as make run's does; it skips the test without
// one, unless QUIRE_REQUIRE_DYNAMODB_LOCAL=1.
func ownDynamoDB(t *testing.T) {
	dir, err := ddblocal.Find()
	if _, java := exec.LookPath("java"); err == nil && java != nil {
		err = fmt.Errorf("DynamoDB Local needs Java 17 or later on PATH: %w", java)
	}
	if err != nil {
		if os.Getenv("QUIRE_REQUIRE_DYNAMODB_LOCAL") != "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Setenv("DYNAMODB_LOCAL_DIR", dir)
	t.Chdir(t.TempDir())
}

// onTables runs the rest of the test in a directory of its own, and
// returns the variables (name, value, ...) that serve the API from fresh
// tables of the test binary's DynamoDB, which is started once for all the
// tests that need no server of their own.
func onTables(t *testing.T) []string {
	_, tables := dynamotest.New(t)
	env := []string{"DYNAMODB_ENDPOINT", dynamotest.Endpoint(t)}
	for logical, physical := range tables {
		env = append(env, dynamo.TableEnv(logical), physical)
	}
	t.Chdir(t.TempDir())
	return env
}

// serve runs the local server in format, with more variables (name, value,
// ...), until it is ready, calls while with its address, stops it, and
// returns what it printed, line by line.
func serve(t *testing.T, format string, while func(url string), more ...string) []string {
	out := &servicetest.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	env := map[string]string{"PORT": "0", "LOG_FORMAT": format, "KEYS_FILE": t.TempDir() + "/keys.json"}
	for i := 0; i+1 < len(more); i += 2 {
		env[more[i]] = more[i+1]
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, out) }()
	url := ""
	for deadline := time.Now().Add(60 * time.Second); url == "" && time.Now().Before(deadline); {
		if m := regexp.MustCompile(`"?url"?[=:]"?(http://[^" ]+)`).FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("run returned before it was ready: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if url == "" {
		t.Fatalf("not ready after 60 s:\n%s", out)
	}
	while(url)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// The --env-vars file the server writes for `sam local invoke` names the
// DynamoDB that serves it and every table there, at api.SAMEnvFile or
// SAM_ENV_FILE (where make e2e puts it, so as not to replace make run's).
func TestSAMEnvFile(t *testing.T) {
	tables := onTables(t)
	for _, file := range []string{"", "other/sam.json"} {
		written := cmp.Or(file, api.SAMEnvFile)
		serve(t, "text", func(url string) {
			b, err := os.ReadFile(written)
			if err != nil {
				t.Fatal(err)
			}
			var env struct{ Parameters map[string]string }
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatal(err)
			}
			db, err := dynamo.NewClient(dynamo.Config{Endpoint: env.Parameters["DYNAMODB_ENDPOINT"], AWS: awsenv.Env{Region: "us-east-1"}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := db.ListTables(t.Context(), &dynamodb.ListTablesInput{})
			if err != nil {
				t.Fatalf("%s: DYNAMODB_ENDPOINT %s: %v", written, env.Parameters["DYNAMODB_ENDPOINT"], err)
			}
			for _, table := range dynamo.Tables() {
				if name := env.Parameters[dynamo.TableEnv(table.Name)]; !slices.Contains(out.TableNames, name) {
					t.Errorf("%s: %s = %q, not a table of %v", written, dynamo.TableEnv(table.Name), name, out.TableNames)
				}
			}
		}, append(tables, "SAM_ENV_FILE", file)...)
		if file != "" {
			if _, err := os.Stat(api.SAMEnvFile); err == nil {
				t.Errorf("with SAM_ENV_FILE=%s, the server wrote %s too", file, api.SAMEnvFile)
			}
		}
		os.Remove(written)
	}
}

// TestDemoData: the README's demo accounts log in with the passwords it
// gives, with the ids, emails and balances it gives, and Grace's cart, her
// order and the catalog hold what it says.
func TestDemoData(t *testing.T) {
	rows := markdown.MustTable(t, "../../README.md", "who", "id", "email", "password", "balance")
	serve(t, "text", func(url string) {
		get := func(token, path string, v any) {
			t.Helper()
			req, _ := http.NewRequest("GET", url+path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s = %d, %v", path, resp.StatusCode, err)
			}
		}
		tokens := map[string]string{}
		for _, row := range rows {
			id, email, password, balance := row.Cells[1], markdown.CodeSpans(row.Cells[2]), markdown.CodeSpans(row.Cells[3]), row.Cells[4]
			if len(email) != 1 || len(password) != 1 {
				t.Fatalf("%s: want an email and a password in backticks", row)
			}
			body := fmt.Sprintf(`{"email":%q,"password":%q}`, email[0], password[0])
			resp, err := http.Post(url+"/login", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var login struct {
				AccessToken string `json:"access_token"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&login); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: POST /login as %s = %d", row, email[0], resp.StatusCode)
				continue
			}
			tokens[email[0]] = login.AccessToken
			var user struct {
				ID      json.Number `json:"id"`
				Email   string      `json:"email"`
				Balance json.Number `json:"balance"`
			}
			get(login.AccessToken, "/users/"+id, &user)
			if user.Email != email[0] || balance != "" && user.Balance.String() != balance {
				t.Errorf("%s: GET /users/%s = %s with balance %s, want %s with %q", row, id, user.Email, user.Balance, email[0], balance)
			}
		}
		grace := tokens["grace@quire.example"]
		var cart struct{ Items []any }
		var orders, products, authors []any
		get(grace, "/cart", &cart)
		get(grace, "/orders", &orders)
		get(grace, "/products", &products)
		get(grace, "/authors", &authors)
		if len(cart.Items) != 2 || len(orders) != 1 || len(products) != 5 || len(authors) != 3 {
			t.Errorf("Grace's cart holds %d books and she has %d orders; the shop has %d books by %d authors: the README says 2, 1, 5 and 3",
				len(cart.Items), len(orders), len(products), len(authors))
		}
	}, onTables(t)...)
}

// readmeAddress is where the README says `make run` serves.
const readmeAddress = "http://127.0.0.1:8080"

// TestREADME: what the README says `make run` prints, it prints (each line
// of its block, less the time, and with the server's address in place of
// readmeAddress), and the README's curl lines work as written against it:
// each answers 2xx, and the payment 201.
func TestREADME(t *testing.T) {
	printed := readmeBlock(t, "cmd/local/main_test.go checks that make run prints")
	script := strings.Join(readmeBlock(t, "cmd/local/main_test.go runs the next block"), "\n")
	tables := onTables(t) // skips the test without DynamoDB Local
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's examples need %s (make deps installs it): %v", tool, err)
		}
	}
	var served string
	lines := serve(t, "text", func(url string) {
		served = url
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", strings.ReplaceAll(script, readmeAddress, url))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the README's curl lines: %v\n%s", err, out)
		}
		statuses := regexp.MustCompile(`(?m)^HTTP/1\.1 (\d+)`).FindAllStringSubmatch(string(out), -1)
		if len(statuses) != strings.Count(script, "curl -i") || statuses[len(statuses)-1][1] != "201" {
			t.Errorf("the README's curl lines answered %v, want one 2xx per curl -i and the payment's 201:\n%s", statuses, out)
		}
		for _, s := range statuses {
			if s[1][0] != '2' {
				t.Errorf("a README curl line answered %s:\n%s", s[1], out)
			}
		}
	}, tables...)
	got := map[string]bool{}
	for _, l := range lines {
		l = regexp.MustCompile(`^time=\S+ `).ReplaceAllString(l, "")
		got[strings.ReplaceAll(l, strings.TrimPrefix(served, "http://"), strings.TrimPrefix(readmeAddress, "http://"))] = true
	}
	for _, want := range printed {
		if !got[want] {
			t.Errorf("make run does not print the README's line\n%s\nIt prints:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// readmeBlock returns the lines of the README's code block that follows
// the comment that starts with marker.
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "<!-- "+marker)
	if !ok {
		t.Fatalf("README.md has no block after <!-- %s", marker)
	}
	_, block, _ := strings.Cut(after, "```")
	_, block, _ = strings.Cut(block, "\n") // the fence's language
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// parseText reads the keys and values of a line of slog's text handler.
func parseText(line string) map[string]any {
	rec := map[string]any{}
	for _, m := range regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`).FindAllStringSubmatch(line, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			if err := json.Unmarshal([]byte(v), &v); err != nil {
				return nil
			}
		}
		rec[m[1]] = v
	}
	return rec
}
