package auth_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// session is what login or a refresh answered, with the session id its
// access token carries.
type session struct {
	httpapi.TokenResponse
	sid string
}

// pair reads the tokens of a 200 answer of POST /login or POST /tokens,
// and checks them: a bearer access token of the default lifetime naming
// the user, a refresh token, no-store.
func pair(t *testing.T, api *servicetest.API, r servicetest.Response, user quire.ID) session {
	t.Helper()
	if r.StatusCode != http.StatusOK || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s %s = %d, Cache-Control %q: %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Header.Get("Cache-Control"), r.Body)
	}
	var s session
	if err := json.Unmarshal([]byte(r.Body), &s.TokenResponse); err != nil {
		t.Fatal(err)
	}
	if s.TokenType != "Bearer" || s.ExpiresIn != int64(login.DefaultLifetime.Seconds()) || s.RefreshToken == "" ||
		s.RefreshExpiresIn <= 0 || s.RefreshExpiresIn > int64(login.RefreshIdle.Seconds()) {
		t.Errorf("%s answered %+v", r.Request.URL.Path, s.TokenResponse)
	}
	tokens, _ := login.TokenConfigFromEnv(func(string) string { return "" })
	id, err := auth.NewVerifier(api.Keys, tokens, nil).Verify(s.AccessToken)
	if err != nil || id.UserID != user || id.SessionID == "" {
		t.Fatalf("access token of %+v, %v; want user %d in a session", id, err, user)
	}
	s.sid = id.SessionID
	return s
}

// start logs in as email and returns the new session.
func start(t *testing.T, api *servicetest.API, email, password string, user quire.ID) session {
	t.Helper()
	return pair(t, api, postLogin(t, api, email, password), user)
}

// refresh sends POST /tokens with the refresh token token.
func refresh(t *testing.T, api *servicetest.API, token string) servicetest.Response {
	t.Helper()
	body, _ := json.Marshal(httpapi.RefreshRequest{RefreshToken: &token})
	return api.Do(t, "POST", "/tokens", string(body))
}

// refused fails unless POST /tokens refuses token with the one 401 of
// every bad refresh token, and returns the problem without its request id.
func refused(t *testing.T, api *servicetest.API, token string) string {
	t.Helper()
	r := refresh(t, api, token)
	var p map[string]any
	if r.StatusCode != http.StatusUnauthorized || r.Header.Get("Content-Type") != rest.ProblemMediaType || json.Unmarshal([]byte(r.Body), &p) != nil {
		t.Fatalf("POST /tokens = %d %s %s, want the 401 problem", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	if p["type"] != rest.ProblemType(quire.EUNAUTHORIZED) || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("POST /tokens: problem %s, WWW-Authenticate %q", r.Body, r.Header.Get("WWW-Authenticate"))
	}
	delete(p, "request_id")
	b, _ := json.Marshal(p)
	return string(b)
}

// TestRefreshRotates: login answers both tokens; a refresh answers a new
// pair of the same session, whose tokens both work, and kills the refresh
// token it was given; a dead refresh token used again ends the session, so
// that the thief and the victim, whichever holds the live token, both have
// to log in again (RFC 9700 section 4.14.2).
func TestRefreshRotates(t *testing.T) {
	api := seeded(t)
	first := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)

	second := pair(t, api, refresh(t, api, first.RefreshToken), 2)
	if second.sid != first.sid {
		t.Errorf("the refreshed access token is of session %s, want %s", second.sid, first.sid)
	}
	if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
		t.Errorf("a refresh answered a token it had answered before")
	}
	api.Bearer(second.AccessToken).Expect(t, "GET", "/users/2", "", http.StatusOK)
	third := pair(t, api, refresh(t, api, second.RefreshToken), 2) // the new refresh token works

	// The first refresh token is dead: using it again is a reuse, which
	// ends the session, the live refresh token with it.
	refused(t, api, first.RefreshToken)
	refused(t, api, third.RefreshToken)
	refused(t, api, second.RefreshToken)
	api.Bearer(third.AccessToken).Expect(t, "DELETE", "/session", "", http.StatusNotFound)
	// Access tokens are stateless: the session's last one lives on until
	// it expires.
	api.Bearer(third.AccessToken).Expect(t, "GET", "/users/2", "", http.StatusOK)

	// A new login starts a new session.
	again := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
	if again.sid == first.sid {
		t.Errorf("a new login continued session %s", first.sid)
	}
	pair(t, api, refresh(t, api, again.RefreshToken), 2)
}

// post sends a JSON body with a plain client, for goroutines, where the
// test's helpers may not stop the test.
func post(url, body string) (int, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

// TestConcurrentRefreshes: one refresh token sent by several requests at
// once (a thief racing the client, or a client that retries too eagerly)
// gets one new pair at most, and ends the session: every other request is
// a reuse.
func TestConcurrentRefreshes(t *testing.T) { concurrentRefreshes(t, seeded(t)) }

// TestConcurrentRefreshesThroughConflicts: the same, with transactions
// that meet one in flight cancelled as DynamoDB cancels them: the reuses'
// revocations of one session collide, and each still ends it and answers
// 401.
func TestConcurrentRefreshesThroughConflicts(t *testing.T) {
	_, conflicts := servicetest.Conflicts(t)
	api := servicetest.New(t, conflicts)
	if _, err := demo.Seed(t.Context(), api.Stores.Users, servicetest.DemoOptions()); err != nil {
		t.Fatal(err)
	}
	concurrentRefreshes(t, api)
}

func concurrentRefreshes(t *testing.T, api *servicetest.API) {
	for _, n := range []int{2, 2, 8} {
		s := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
		body, _ := json.Marshal(httpapi.RefreshRequest{RefreshToken: &s.RefreshToken})
		statuses := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { statuses[i], errs[i] = post(api.URL+"/tokens", string(body)) })
		}
		wg.Wait()
		ok := 0
		for i, st := range statuses {
			switch {
			case errs[i] != nil:
				t.Fatal(errs[i])
			case st == http.StatusOK:
				ok++
			case st != http.StatusUnauthorized:
				t.Errorf("%d refreshes at once: one answered %d", n, st)
			}
		}
		if ok > 1 {
			t.Errorf("%d refreshes at once with one token: %d new pairs, want 1 at most (%v)", n, ok, statuses)
		}
		// The session has ended, whoever won.
		api.Bearer(s.AccessToken).Expect(t, "DELETE", "/session", "", http.StatusNotFound)
		refused(t, api, s.RefreshToken)
	}
}

// TestLogout: DELETE /session ends the session of the access token that
// calls it, and no other; its refresh token is dead after.
func TestLogout(t *testing.T) {
	api := seeded(t)
	phone := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
	laptop := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)

	r := api.Bearer(phone.AccessToken).Expect(t, "DELETE", "/session", "", http.StatusNoContent)
	if r.Body != "" {
		t.Errorf("204 with a body %q", r.Body)
	}
	refused(t, api, phone.RefreshToken)
	api.Bearer(phone.AccessToken).ExpectProblem(t, "DELETE", "/session", "", http.StatusNotFound, quire.ENOTFOUND)
	// The access token stays valid until it expires.
	api.Bearer(phone.AccessToken).Expect(t, "GET", "/users/2", "", http.StatusOK)

	// The other session of the same user is untouched.
	next := pair(t, api, refresh(t, api, laptop.RefreshToken), 2)
	api.Bearer(next.AccessToken).Expect(t, "DELETE", "/session", "", http.StatusNoContent)
	refused(t, api, next.RefreshToken)

	// A token of no session (issued before sessions existed) has nothing
	// to end; no token at all is 401.
	api.As(t, 2, quire.RoleCustomer).ExpectProblem(t, "DELETE", "/session", "", http.StatusNotFound, quire.ENOTFOUND)
	if r := api.Do(t, "DELETE", "/session", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("DELETE /session without a token = %d %s", r.StatusCode, r.Body)
	}
}

// TestSessionRevocation: a change of password, role or status, closing the
// account and deleting the user end every session of the user started
// before: their refresh tokens are refused. Other changes leave them be.
func TestSessionRevocation(t *testing.T) {
	grace := func(extra string) string {
		return `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper"` + extra + `}`
	}
	for _, tc := range []struct {
		name               string
		admin              bool
		method, path, body string
		status             int
		revokes            bool
		relogin            string // a password that logs in after, "" for none
	}{
		{"password change", false, "PUT", "/users/2", grace(`,"password":"a new passphrase","current_password":"` + demo.CustomerPassword + `"`), 200, true, "a new passphrase"},
		{"password set by an admin", true, "PUT", "/users/2", grace(`,"role":"customer","status":"ACTIVE","password":"a new passphrase"`), 200, true, "a new passphrase"},
		{"role change", true, "PUT", "/users/2", grace(`,"role":"admin","status":"ACTIVE"`), 200, true, demo.CustomerPassword},
		{"status change", true, "PUT", "/users/2", grace(`,"role":"customer","status":"CLOSED"`), 200, true, demo.CustomerPassword},
		{"close", false, "POST", "/users/2/close", "", 200, true, demo.CustomerPassword},
		{"delete", true, "DELETE", "/users/2", "", 204, true, ""},

		{"names only", false, "PUT", "/users/2", `{"email":"grace@quire.example","first_name":"Amazing","last_name":"Grace"}`, 200, false, ""},
		{"names only, by an admin", true, "PUT", "/users/2", `{"email":"grace@quire.example","first_name":"Amazing","last_name":"Grace","role":"customer","status":"ACTIVE"}`, 200, false, ""},
		{"email change", false, "PUT", "/users/2", `{"email":"hopper@quire.example","first_name":"Grace","last_name":"Hopper","current_password":"` + demo.CustomerPassword + `"}`, 200, false, ""},
		{"a deposit by the admin", true, "POST", "/users/2/deposit", `{"amount": 5.00}`, 200, false, ""},
		{"profile", false, "PUT", "/users/2/profile", `{"bio":"Rear admiral"}`, 200, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := seeded(t)
			before := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
			other := start(t, api, "alan@quire.example", demo.CustomerPassword, 3)
			who := api.As(t, 2, quire.RoleCustomer)
			if tc.admin {
				who = api.As(t, 1, quire.RoleAdmin)
			}
			who.Expect(t, tc.method, tc.path, tc.body, tc.status)

			if tc.revokes {
				refused(t, api, before.RefreshToken)
			} else {
				pair(t, api, refresh(t, api, before.RefreshToken), 2)
			}
			// Another user's session is untouched.
			pair(t, api, refresh(t, api, other.RefreshToken), 3)
			// A session started after the change works.
			if tc.relogin != "" {
				after := start(t, api, demo.CustomerEmail, tc.relogin, 2)
				pair(t, api, refresh(t, api, after.RefreshToken), 2)
			}
		})
	}
}

// storedSession returns the stored item of the session of a refresh token
// (its string and number attributes; on memory, its fields), or nil.
func storedSession(t *testing.T, api *servicetest.API, refresh string) map[string]string {
	t.Helper()
	s, ok := login.SessionOf(refresh, 0, time.Now())
	if !ok {
		t.Fatalf("%q is not a refresh token", refresh)
	}
	if api.DB == nil { // on memory: the session as its store reads it
		got, _, err := api.Stores.Sessions.Resume(t.Context(), s.UserID, s.ID)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"hash": got.TokenHash, "session_epoch": fmt.Sprint(got.Epoch),
			"started": got.Started.String(), "idle_until": got.IdleUntil.String(), "ends": got.Ends.String()}
	}
	out, err := api.DB.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(api.Tables.Physical(routes.TableSessions)),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "user#" + s.UserID.String()},
			"sk": &types.AttributeValueMemberS{Value: "session#" + s.ID},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Item == nil {
		return nil
	}
	item := map[string]string{}
	for name, v := range out.Item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			item[name] = v.Value
		case *types.AttributeValueMemberN:
			item[name] = v.Value
		default:
			item[name] = fmt.Sprintf("%T", v)
		}
	}
	return item
}

// TestHostileRefreshTokens: every refresh token here is refused with the
// same 401 (a missing or mistyped field, or one longer than a refresh
// token, is 400), none is a 500, and none changes another session.
func TestHostileRefreshTokens(t *testing.T) {
	api := seeded(t)
	store := api.Stores.Sessions
	victim := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
	bystander := start(t, api, "alan@quire.example", demo.CustomerPassword, 3)

	// A reused token: its session ends, which is the point.
	reused := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
	pair(t, api, refresh(t, api, reused.RefreshToken), 2)
	// Sessions past their idle expiry and past their maximum.
	idle, idleToken := login.NewSession(2, 0, time.Now().Add(-login.RefreshIdle-time.Minute))
	old, oldToken := login.NewSession(2, 0, time.Now().Add(-login.SessionMax-time.Minute))
	old.IdleUntil = time.Now().Add(time.Hour)
	for _, s := range []login.Session{idle, old} {
		if err := store.Start(t.Context(), s, demo.CustomerEmail); err != nil {
			t.Fatal(err)
		}
	}

	raw, err := base64.RawURLEncoding.DecodeString(victim.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	withBytes := func(change func(b []byte)) string {
		b := append([]byte(nil), raw...)
		change(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	_, unknownToken := login.NewSession(2, 0, time.Now()) // never stored
	// 56 bytes leave the last character's 2 low bits unused, zero in the
	// canonical form: setting one decodes to the same bytes.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, victim.RefreshToken[len(victim.RefreshToken)-1])
	nonCanonical := victim.RefreshToken[:len(victim.RefreshToken)-1] + string(alphabet[last|1])

	stored := map[string]map[string]string{}
	for _, s := range []session{victim, bystander} {
		stored[s.RefreshToken] = storedSession(t, api, s.RefreshToken)
	}

	var bodies []string
	for _, tc := range []struct {
		name, body string
		status     int // 401 when 0
	}{
		{name: "unknown session", body: unknownToken},
		{name: "reused", body: reused.RefreshToken},
		{name: "idle expiry passed", body: idleToken},
		{name: "maximum lifetime passed", body: oldToken},
		{name: "another user's: the victim's with user id 3", body: withBytes(func(b []byte) { binary.BigEndian.PutUint64(b[:8], 3) })},
		{name: "user id 0", body: withBytes(func(b []byte) { binary.BigEndian.PutUint64(b[:8], 0) })},
		{name: "user id beyond 2^53-1", body: withBytes(func(b []byte) { binary.BigEndian.PutUint64(b[:8], 1<<53) })},
		{name: "empty", body: ""},
		{name: "non-canonical last character", body: nonCanonical},
		{name: "one character short", body: victim.RefreshToken[:len(victim.RefreshToken)-1]},
		{name: "not base64", body: strings.Repeat("!", len(victim.RefreshToken))},
		{name: "NUL bytes", body: strings.Repeat("\x00", len(victim.RefreshToken))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies = append(bodies, refused(t, api, tc.body))
		})
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Errorf("refusals differ:\n%s\n%s", bodies[0], b)
		}
	}
	if len(bodies) > 0 && strings.Contains(strings.ToLower(bodies[0]), "expired") {
		t.Errorf("a refusal tells why: %s", bodies[0])
	}

	refreshBody := func(token string) string {
		b, _ := json.Marshal(httpapi.RefreshRequest{RefreshToken: &token})
		return string(b)
	}
	for _, tc := range []struct{ name, body string }{
		{"no field", `{}`},
		{"null", `{"refresh_token": null}`},
		{"a number", `{"refresh_token": 42}`},
		{"unknown field", `{"refresh_token": "x", "access_token": "y"}`},
		{"not an object", `"` + victim.RefreshToken + `"`},
		{"standard base64", refreshBody(base64.StdEncoding.EncodeToString(raw))},
		{"padded", refreshBody(victim.RefreshToken + "=")},
		{"one character more", refreshBody(victim.RefreshToken + "A")},
		{"an access token", refreshBody(victim.AccessToken)},
		{"10 KB", refreshBody(strings.Repeat("A", 10_000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Do(t, "POST", "/tokens", tc.body)
			if r.StatusCode != http.StatusBadRequest || r.Header.Get("Content-Type") != rest.ProblemMediaType {
				t.Errorf("POST /tokens %s = %d %s", tc.body, r.StatusCode, r.Body)
			}
		})
	}
	if r := api.Do(t, "POST", "/tokens", `{"refresh_token": "`+strings.Repeat("A", rest.MaxBodyBytes)+`"}`); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /tokens of more than 64 KiB = %d %s", r.StatusCode, r.Body[:min(len(r.Body), 200)])
	}

	// The expired sessions were ended on sight; the others are as they
	// were, and their tokens still work.
	for _, token := range []string{idleToken, oldToken, reused.RefreshToken} {
		if item := storedSession(t, api, token); item != nil {
			t.Errorf("a refused session is still stored: %v", item)
		}
	}
	for token, item := range stored {
		if diff := cmp.Diff(item, storedSession(t, api, token)); diff != "" {
			t.Errorf("a bystanding session changed (-before +after):\n%s", diff)
		}
	}
	pair(t, api, refresh(t, api, victim.RefreshToken), 2)
	pair(t, api, refresh(t, api, bystander.RefreshToken), 3)
}

// TestForgedSecret: a refresh token with a guessed secret for a session
// whose user and id are known (any of its access tokens, expired ones
// included, says them: sub and sid) is refused. The session cannot tell a
// guess from a token it issued before, so it ends, as a reuse does: whoever
// knows a session's id can end it, as DELETE /session with one of its live
// access tokens can.
func TestForgedSecret(t *testing.T) {
	api := seeded(t)
	s := start(t, api, demo.CustomerEmail, demo.CustomerPassword, 2)
	raw, _ := base64.RawURLEncoding.DecodeString(s.RefreshToken)
	forged := append([]byte(nil), raw[:24]...)
	forged = append(forged, []byte("a guess of thirty-two bytes.....")...)
	refused(t, api, base64.RawURLEncoding.EncodeToString(forged))
	refused(t, api, s.RefreshToken)
}
