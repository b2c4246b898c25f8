package auth_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/password/argon2id"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// faultless returns Quire with the demo users behind a fault proxy with no
// rules, which counts each DynamoDB operation the functions make.
func faultless(t *testing.T) (*servicetest.API, *ddbfault.Proxy) {
	t.Helper()
	p, opt := servicetest.Faults(t)
	api := servicetest.New(t, opt)
	if _, err := demo.Seed(t.Context(), api.Stores.Users, servicetest.DemoOptions()); err != nil {
		t.Fatal(err)
	}
	return api, p
}

// calls returns how many calls of each operation f makes.
func calls(p *ddbfault.Proxy, f func()) map[string]int {
	ops := []string{"GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"}
	before := map[string]int{}
	for _, op := range ops {
		before[op] = p.Calls(op)
	}
	f()
	out := map[string]int{}
	for _, op := range ops {
		if n := p.Calls(op) - before[op]; n > 0 {
			out[op] = n
		}
	}
	return out
}

// wantLocked fails unless r is a 429 throttled problem whose Retry-After is
// within the login window.
func wantLocked(t *testing.T, r servicetest.Response) {
	t.Helper()
	wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.Body, rest.ProblemType(quire.ETHROTTLED)) ||
		wait < 1 || wait > int(login.LoginWindow.Seconds()) {
		t.Errorf("%d, Retry-After %q: %s; want 429 throttled with a wait within %v", r.StatusCode, r.Header.Get("Retry-After"), r.Body, login.LoginWindow)
	}
}

// Failed logins lock an email, known or not, after MaxLoginFailures: then
// even the right password is 429 with Retry-After, and both make the same
// DynamoDB requests (the guess counted while the account is read) and
// answers; a locked guess makes the same two, its count refused.
func TestLoginLockout(t *testing.T) {
	api, p := faultless(t)
	for _, email := range []string{demo.CustomerEmail, "nobody@quire.example"} {
		t.Run(email, func(t *testing.T) {
			for i := range login.MaxLoginFailures {
				var r servicetest.Response
				got := calls(p, func() { r = postLogin(t, api, email, "not the password") })
				if r.StatusCode != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d %s", i+1, r.StatusCode, r.Body)
				}
				want := map[string]int{"UpdateItem": 1, "GetItem": 1}
				if !equal(got, want) {
					t.Errorf("failure %d made %v, want %v", i+1, got, want)
				}
			}
			var r servicetest.Response
			got := calls(p, func() { r = postLogin(t, api, email, demo.CustomerPassword) })
			wantLocked(t, r)
			if want := map[string]int{"UpdateItem": 1, "GetItem": 1}; !equal(got, want) {
				t.Errorf("a locked login made %v, want %v (no session)", got, want)
			}
		})
	}
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// expire ends the failed-login window of email now, as time would.
func expire(t *testing.T, api *servicetest.API, email string) {
	t.Helper()
	sum := sha256.Sum256([]byte(strings.ToLower(email)))
	_, err := api.DB.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName: aws.String(api.Tables.Physical(routes.TableSessions)),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "login#" + hex.EncodeToString(sum[:])},
			"sk": &types.AttributeValueMemberS{Value: "failures"},
		},
		UpdateExpression:          aws.String("SET expires_at = :past"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10)}},
	})
	if err != nil {
		t.Fatalf("expire the failed logins of %s: %v", email, err)
	}
}

// The owner is not locked out for good: once the window passes, the right
// password logs in (the guess starts a new window over the old count). A
// success clears the count, so that failures start again from none: a
// login is three requests in two round trips: the guess counted while the
// email's reservation is read, then one transaction of the session and the
// cleared count.
func TestLockoutEnds(t *testing.T) {
	api, p := faultless(t)
	for range login.MaxLoginFailures {
		postLogin(t, api, demo.CustomerEmail, "not the password")
	}
	wantLocked(t, postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword))
	expire(t, api, demo.CustomerEmail)
	var r servicetest.Response
	got := calls(p, func() { r = postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword) })
	// DynamoDB's TTL may delete the ended window before the login reads
	// it (DynamoDB Local sweeps within seconds): the guess then starts a
	// window where there is none, without the PutItem over the old one.
	restarted := map[string]int{"UpdateItem": 1, "PutItem": 1, "GetItem": 1, "TransactWriteItems": 1}
	swept := map[string]int{"UpdateItem": 1, "GetItem": 1, "TransactWriteItems": 1}
	if r.StatusCode != http.StatusOK || !equal(got, restarted) && !equal(got, swept) {
		t.Fatalf("login after the window: %d, %v; want 200 and %v (a new window, then the login), or %v when TTL has deleted the old window", r.StatusCode, got, restarted, swept)
	}

	for range login.MaxLoginFailures - 1 {
		postLogin(t, api, demo.CustomerEmail, "not the password")
	}
	got = calls(p, func() { r = postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword) })
	if want := map[string]int{"UpdateItem": 1, "GetItem": 1, "TransactWriteItems": 1}; r.StatusCode != http.StatusOK || !equal(got, want) {
		t.Fatalf("login over %d failures: %d, %v; want 200 and %v (the count cleared)", login.MaxLoginFailures-1, r.StatusCode, got, want)
	}
	for i := range login.MaxLoginFailures - 1 {
		if r := postLogin(t, api, demo.CustomerEmail, "not the password"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d after the clear: %d", i+1, r.StatusCode)
		}
	}
	if r := postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword); r.StatusCode != http.StatusOK {
		t.Fatalf("the right password after %d new failures: %d %s", login.MaxLoginFailures-1, r.StatusCode, r.Body)
	}
	got = calls(p, func() { r = postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword) })
	if want := map[string]int{"UpdateItem": 1, "GetItem": 1, "TransactWriteItems": 1}; r.StatusCode != http.StatusOK || !equal(got, want) {
		t.Errorf("a login with a clean count: %d, %v; want 200 and %v", r.StatusCode, got, want)
	}
}

// A wrong current password, given to change one's own credentials, is a
// failed login of the account's email: it locks the email, for login too.
// Once locked, a change of one's own email or password is 429 whether its
// current password is right or wrong, and changes nothing; once the lock
// ends, a proved email change reads the caller's account and the user,
// counts its guess (starting a new window) and commits in one
// transaction, which clears the count.
func TestWrongCurrentPasswordCounts(t *testing.T) {
	api, p := faultless(t)
	grace := api.As(t, 2, quire.RoleCustomer)
	password := `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","password":"a new passphrase","current_password":"wrong"}`
	email := `{"email":"grace.h@quire.example","first_name":"Grace","last_name":"Hopper","current_password":"wrong"}`
	right := func(body string) string { return strings.Replace(body, `"wrong"`, `"`+demo.CustomerPassword+`"`, 1) }
	for i := range login.MaxLoginFailures {
		if r := grace.Do(t, "PUT", "/users/2", password); r.StatusCode != http.StatusForbidden {
			t.Fatalf("wrong current password %d: %d %s", i+1, r.StatusCode, r.Body)
		}
	}
	before := grace.Expect(t, "GET", "/users/2", "", http.StatusOK).Body
	for name, body := range map[string]string{
		"password, right": right(password), "password, wrong": password,
		"email, right": right(email), "email, wrong": email,
	} {
		t.Run(name, func(t *testing.T) { wantLocked(t, grace.Do(t, "PUT", "/users/2", body)) })
	}
	if after := grace.Expect(t, "GET", "/users/2", "", http.StatusOK).Body; after != before {
		t.Errorf("a locked account changed: %s, was %s", after, before)
	}
	wantLocked(t, postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword))

	expire(t, api, demo.CustomerEmail)
	var r servicetest.Response
	got := calls(p, func() { r = grace.Do(t, "PUT", "/users/2", right(email)) })
	want := map[string]int{"GetItem": 2, "UpdateItem": 1, "PutItem": 1, "TransactWriteItems": 1}
	if got["PutItem"] == 0 {
		// The ended window may be gone by then (DynamoDB deletes an
		// expired item by TTL, and a run on DynamoDB Local found it gone
		// too): the guess's UpdateItem starts the new one itself.
		delete(want, "PutItem")
	}
	if r.StatusCode != http.StatusOK || !equal(got, want) {
		t.Fatalf("one's own email change once the lock ends: %d %s, %v; want 200 and %v", r.StatusCode, r.Body, got, want)
	}
	if r := postLogin(t, api, "grace.h@quire.example", demo.CustomerPassword); r.StatusCode != http.StatusOK {
		t.Errorf("login with the new email: %d %s", r.StatusCode, r.Body)
	}
}

// Guesses sent together are counted before their passwords are checked,
// so that MaxLoginFailures of them, and no more, have a password checked
// (401), however many arrive at once: the rest are 429 with Retry-After,
// for an email known or not, for a fresh count and for one whose window
// has just ended. The right password is then 429 too.
func TestParallelGuesses(t *testing.T) {
	api, _ := faultless(t)
	for _, tc := range []struct{ name, email string }{
		{"a customer", "alan@quire.example"},
		{"nobody", "nobody@quire.example"},
		{"a window that just ended", demo.CustomerEmail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.email == demo.CustomerEmail {
				for range login.MaxLoginFailures {
					postLogin(t, api, tc.email, "not the password")
				}
				expire(t, api, tc.email)
			}
			statuses := guessAtOnce(t, api, tc.email, 40)
			// A count whose write DynamoDB Local did not answer in time,
			// on a machine short of CPU, is a 503: never a guess more.
			if statuses[http.StatusUnauthorized] != login.MaxLoginFailures ||
				statuses[http.StatusTooManyRequests]+statuses[http.StatusServiceUnavailable] != 40-login.MaxLoginFailures {
				t.Errorf("40 guesses at once: %v; want %d 401 and the rest 429", statuses, login.MaxLoginFailures)
			}
			wantLocked(t, postLogin(t, api, tc.email, demo.CustomerPassword))
		})
	}
}

// guessAtOnce sends n wrong passwords of email at once and counts the
// answers by status; each refusal other than 401 must be a 429 as
// wantLocked says.
func guessAtOnce(t *testing.T, api *servicetest.API, email string, n int) map[int]int {
	t.Helper()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for range n {
		wg.Go(func() {
			r := postLogin(t, api, email, "not the password")
			if r.StatusCode == http.StatusTooManyRequests {
				wantLocked(t, r)
			}
			mu.Lock()
			statuses[r.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}

// Under DynamoDB's faults, a guess whose count was not written, or whose
// answer was lost, never has its password checked for free: of 40 guesses
// at once with the count's writes throttled or their answers lost at
// random, at most MaxLoginFailures are 401 and every other answer is a 429
// or a 503 to retry (a retry after a lost answer may count a guess twice).
// The right password is then still refused, and none of it is a 500.
func TestParallelGuessesUnderFaults(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	for _, fault := range []ddbfault.Kind{ddbfault.Lost, ddbfault.Throttle, ddbfault.Reset, ddbfault.Internal} {
		t.Run(string(fault), func(t *testing.T) {
			api, p := faultless(t)
			email := "nobody." + string(fault) + "@quire.example"
			p.Set(ddbfault.Rule{Fault: fault, Operation: "UpdateItem", Table: "sessions", Probability: 0.3})
			statuses := guessAtOnce(t, api, email, 40)
			if p.Injected()[fault] == 0 {
				t.Fatalf("no %s fault injected", fault)
			}
			retry := statuses[http.StatusServiceUnavailable] + statuses[http.StatusConflict]
			if statuses[http.StatusUnauthorized] > login.MaxLoginFailures || statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests]+retry != 40 {
				t.Errorf("40 guesses at once, %d faults: %v; want at most %d 401, the rest 429, 409 or 503", p.Injected()[fault], statuses, login.MaxLoginFailures)
			}
			p.Set()
			for statuses[http.StatusUnauthorized] < login.MaxLoginFailures {
				r := postLogin(t, api, email, "not the password")
				if r.StatusCode != http.StatusUnauthorized {
					break
				}
				statuses[http.StatusUnauthorized]++
			}
			wantLocked(t, postLogin(t, api, email, demo.CustomerPassword))
		})
	}
}

// hashes counts the work of a password.Hasher: each Hash and each Match.
type hashes struct {
	password.Hasher
	n atomic.Int32
}

func (h *hashes) Hash(pw string) string      { h.n.Add(1); return h.Hasher.Hash(pw) }
func (h *hashes) Match(hash, pw string) bool { h.n.Add(1); return h.Hasher.Match(hash, pw) }
func (h *hashes) work(f func()) (n int32)    { before := h.n.Load(); f(); return h.n.Load() - before }

// Lockout comes before any hash: once an email is locked, a login, a
// change of one's own password or email, and the deletion of one's own
// account are 429 without hashing anything,
// neither the new password nor the current one, so that guesses against a
// locked email cost the functions no hashing at all.
func TestLockoutBeforeAnyHash(t *testing.T) {
	h := &hashes{Hasher: argon2id.MinCost}
	api := servicetest.New(t, servicetest.Option{Demo: true, Config: func(c *service.Config) { c.Passwords = h }})
	grace := api.As(t, 2, quire.RoleCustomer)
	change := `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","password":"a new passphrase","current_password":"wrong"}`
	for i := range login.MaxLoginFailures {
		if r := grace.Do(t, "PUT", "/users/2", change); r.StatusCode != http.StatusForbidden {
			t.Fatalf("wrong current password %d: %d %s", i+1, r.StatusCode, r.Body)
		}
	}
	right := strings.Replace(change, `"wrong"`, `"`+demo.CustomerPassword+`"`, 1)
	for name, send := range map[string]func() servicetest.Response{
		"a login":                  func() servicetest.Response { return postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword) },
		"a password change, right": func() servicetest.Response { return grace.Do(t, "PUT", "/users/2", right) },
		"a password change, wrong": func() servicetest.Response { return grace.Do(t, "PUT", "/users/2", change) },
		"an email change": func() servicetest.Response {
			return grace.Do(t, "PUT", "/users/2", strings.Replace(right, "grace@", "grace.h@", 1))
		},
		"a deletion of one's own account, right": func() servicetest.Response {
			return grace.Do(t, "DELETE", "/users/2", `{"current_password":"`+demo.CustomerPassword+`"}`)
		},
		"a deletion of one's own account, wrong": func() servicetest.Response {
			return grace.Do(t, "DELETE", "/users/2", `{"current_password":"wrong"}`)
		},
	} {
		var r servicetest.Response
		if n := h.work(func() { r = send() }); n != 0 {
			t.Errorf("%s of a locked email: %d hashes or matches, want none", name, n)
		}
		wantLocked(t, r)
	}
}

// A sign-up of a taken email tells that the email has an account, and is
// counted as a guess of it: after MaxLoginFailures of them, sign-ups of
// that email are 429 as its logins are (the same count), so learning which
// emails have accounts costs what guessing their passwords does. Another
// email signs up as ever.
func TestSignUpsOfATakenEmailCount(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{Demo: true})
	signUp := func(email string) servicetest.Response {
		return api.Do(t, "POST", "/users", `{"email":"`+email+`","first_name":"Eve","last_name":"Probe","password":"correct horse battery"}`)
	}
	for i := range login.MaxLoginFailures {
		if r := signUp(demo.CustomerEmail); r.StatusCode != http.StatusConflict || !strings.Contains(r.Body, rest.ProblemType(quire.EEMAILTAKEN)) {
			t.Fatalf("sign-up %d of a taken email: %d %s, want 409 email-taken", i+1, r.StatusCode, r.Body)
		}
	}
	wantLocked(t, signUp(demo.CustomerEmail))
	wantLocked(t, postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword))
	if r := signUp("eve@example.com"); r.StatusCode != http.StatusCreated {
		t.Errorf("a sign-up of a free email: %d %s", r.StatusCode, r.Body)
	}
}
