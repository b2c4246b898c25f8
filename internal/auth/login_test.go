package auth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/auth"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// seeded returns a running Quire with the demo users.
func seeded(t *testing.T) *servicetest.API {
	t.Helper()
	api := servicetest.New(t)
	if _, err := demo.Seed(t.Context(), api.Stores.Users, servicetest.DemoOptions()); err != nil {
		t.Fatal(err)
	}
	return api
}

func postLogin(t *testing.T, api *servicetest.API, email, password string) servicetest.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return api.Do(t, "POST", "/login", string(body))
}

// TestLogin logs in, checks the token against the published keys and uses
// it.
func TestLogin(t *testing.T) {
	api := seeded(t)
	jwks := api.Do(t, "GET", "/.well-known/jwks.json", "")
	if jwks.StatusCode != 200 || jwks.Header.Get("Content-Type") != "application/json" || strings.Contains(jwks.Body, `"d"`) {
		t.Fatalf("GET /.well-known/jwks.json = %d %s %s", jwks.StatusCode, jwks.Header.Get("Content-Type"), jwks.Body)
	}
	keys, err := auth.ParseKeySet([]byte(jwks.Body))
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := login.TokenConfigFromEnv(func(string) string { return "" })
	verifier := auth.NewVerifier(keys, tokens, nil)

	for _, tc := range []struct {
		email, password string
		id              quire.ID
		role            quire.Role
	}{
		{demo.AdminEmail, demo.AdminPassword, 1, quire.RoleAdmin},
		{demo.CustomerEmail, demo.CustomerPassword, 2, quire.RoleCustomer},
		{strings.ToUpper(demo.CustomerEmail), demo.CustomerPassword, 2, quire.RoleCustomer},
	} {
		r := postLogin(t, api, tc.email, tc.password)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("login %s = %d %s %q %s", tc.email, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"), r.Body)
		}
		var tr httpapi.TokenResponse
		if err := json.Unmarshal([]byte(r.Body), &tr); err != nil {
			t.Fatal(err)
		}
		if tr.TokenType != "Bearer" || tr.ExpiresIn != int64(login.DefaultLifetime.Seconds()) {
			t.Errorf("login %s: %+v", tc.email, tr)
		}
		id, err := verifier.Verify(tr.AccessToken)
		if err != nil || id.UserID != tc.id || id.Role != tc.role {
			t.Errorf("login %s: token for %+v, %v; want user %d %s", tc.email, id, err, tc.id, tc.role)
		}
		me := api.Do(t, "GET", fmt.Sprintf("/users/%d", tc.id), "", "Authorization", "Bearer "+tr.AccessToken)
		if me.StatusCode != 200 {
			t.Errorf("GET own user with the login token = %d %s", me.StatusCode, me.Body)
		}
		admin := api.Do(t, "GET", "/admin/users", "", "Authorization", "Bearer "+tr.AccessToken)
		if want := map[quire.Role]int{quire.RoleAdmin: 200, quire.RoleCustomer: 403}[tc.role]; admin.StatusCode != want {
			t.Errorf("GET /admin/users as %s = %d, want %d", tc.role, admin.StatusCode, want)
		}
	}
}

// TestLoginFailuresLookAlike: an unknown email and a wrong password get the
// same answer, so login does not tell which emails have accounts.
func TestLoginFailuresLookAlike(t *testing.T) {
	api := seeded(t)
	var bodies []string
	for _, c := range [][2]string{
		{demo.CustomerEmail, "wrong password"},
		{"nobody@quire.example", demo.CustomerPassword},
		{demo.CustomerEmail, demo.AdminPassword},
	} {
		r := postLogin(t, api, c[0], c[1])
		if r.StatusCode != 401 || r.Header.Get("Content-Type") != rest.ProblemMediaType {
			t.Fatalf("login %s/%s = %d %s", c[0], c[1], r.StatusCode, r.Body)
		}
		if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="quire"` {
			t.Errorf("WWW-Authenticate = %q", got)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
			t.Fatal(err)
		}
		if p["type"] != rest.ProblemType(quire.EUNAUTHORIZED) || p["request_id"] == "" {
			t.Errorf("problem %s", r.Body)
		}
		delete(p, "request_id")
		b, _ := json.Marshal(p)
		bodies = append(bodies, string(b))
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Errorf("login failures differ:\n%s\n%s", bodies[0], b)
		}
	}
}

// TestLoginBadRequests: a body that is not credentials, or whose email or
// password is longer than any account's, is refused field by field.
func TestLoginBadRequests(t *testing.T) {
	api := seeded(t)
	for _, tc := range []struct {
		body, contentType string
		status            int
		pointers          []string
	}{
		{`{}`, "application/json", 400, []string{"/email", "/password"}},
		{`{"email":"a@b.co"}`, "application/json", 400, []string{"/password"}},
		{`{"email":"a@b.co","password":12345678}`, "application/json", 400, []string{"/password"}},
		{`{"email":"a@b.co","password":"x","remember":true}`, "application/json", 400, []string{"/remember"}},
		// Longer than any account's: refused before a lookup or a hash.
		{credentials(longEmail(quire.MaxEmailLen+1), "x"), "application/json", 400, []string{"/email"}},
		{credentials("a@b.co", strings.Repeat("é", password.MaxLength+1)), "application/json", 400, []string{"/password"}},
		{credentials(longEmail(quire.MaxEmailLen+1), strings.Repeat("p", password.MaxLength+1)), "application/json", 400, []string{"/email", "/password"}},
		// At the limits, a login like any other: these credentials are wrong.
		{credentials(longEmail(quire.MaxEmailLen), strings.Repeat("é", password.MaxLength)), "application/json", 401, nil},
		{`email=a@b.co&password=x`, "application/x-www-form-urlencoded", 415, nil},
	} {
		r := api.Do(t, "POST", "/login", tc.body, "Content-Type", tc.contentType)
		if r.StatusCode != tc.status || r.Header.Get("Content-Type") != rest.ProblemMediaType {
			t.Errorf("login %s = %d %s", tc.body, r.StatusCode, r.Body)
			continue
		}
		var p rest.Problem
		if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range p.Errors {
			got = append(got, e.Pointer)
		}
		if strings.Join(got, ",") != strings.Join(tc.pointers, ",") {
			t.Errorf("login %s: errors at %v, want %v", tc.body, got, tc.pointers)
		}
	}
}

func credentials(email, password string) string {
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return string(b)
}

// longEmail returns a well-formed email address of n bytes.
func longEmail(n int) string {
	const domain = "@example.com"
	return strings.Repeat("a", n-len(domain)) + domain
}

// TestPasswordChange: a new password from PUT replaces the old one.
func TestPasswordChange(t *testing.T) {
	api := seeded(t)
	c := api.As(t, 2, quire.RoleCustomer)
	r := c.Do(t, "PUT", "/users/2", `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper","password":"a new passphrase","current_password":"`+demo.CustomerPassword+`"}`)
	if r.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", r.StatusCode, r.Body)
	}
	if r := postLogin(t, api, demo.CustomerEmail, demo.CustomerPassword); r.StatusCode != 401 {
		t.Errorf("the old password still logs in: %d", r.StatusCode)
	}
	if r := postLogin(t, api, demo.CustomerEmail, "a new passphrase"); r.StatusCode != 200 {
		t.Errorf("the new password does not log in: %d %s", r.StatusCode, r.Body)
	}
	// A PUT without a password keeps it.
	c.Do(t, "PUT", "/users/2", `{"email":"grace@quire.example","first_name":"Grace","last_name":"Hopper"}`)
	if r := postLogin(t, api, demo.CustomerEmail, "a new passphrase"); r.StatusCode != 200 {
		t.Errorf("a PUT without a password changed it: %d %s", r.StatusCode, r.Body)
	}
}

// Login reads what it needs from the email's reservation: an admin's change
// of another user's email, password and role reaches it at once, and the
// old email no longer logs in.
func TestLoginSeesCredentialChanges(t *testing.T) {
	api := seeded(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	admin.Expect(t, "PUT", "/users/3", `{"email":"turing@quire.example","first_name":"Alan","last_name":"Turing",`+
		`"password":"an enigma machine","role":"admin","status":"ACTIVE"}`, 200)
	if r := postLogin(t, api, "alan@quire.example", demo.CustomerPassword); r.StatusCode != 401 {
		t.Errorf("the old email and password: %d %s", r.StatusCode, r.Body)
	}
	if r := postLogin(t, api, "turing@quire.example", demo.CustomerPassword); r.StatusCode != 401 {
		t.Errorf("the new email with the old password: %d %s", r.StatusCode, r.Body)
	}
	r := postLogin(t, api, "turing@quire.example", "an enigma machine")
	var tok httpapi.TokenResponse
	if err := json.Unmarshal([]byte(r.Body), &tok); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 {
		t.Fatalf("the new email and password: %d %s", r.StatusCode, r.Body)
	}
	if got := api.Bearer(tok.AccessToken).Do(t, "GET", "/admin/users", ""); got.StatusCode != 200 {
		t.Errorf("the new role does not reach the token: GET /admin/users = %d", got.StatusCode)
	}
	// Then a change of the password alone, keeping the email.
	admin.Expect(t, "PUT", "/users/3", `{"email":"turing@quire.example","first_name":"Alan","last_name":"Turing",`+
		`"password":"a universal machine","role":"customer","status":"ACTIVE"}`, 200)
	if r := postLogin(t, api, "turing@quire.example", "an enigma machine"); r.StatusCode != 401 {
		t.Errorf("the replaced password: %d", r.StatusCode)
	}
	r = postLogin(t, api, "turing@quire.example", "a universal machine")
	if err := json.Unmarshal([]byte(r.Body), &tok); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || api.Bearer(tok.AccessToken).Do(t, "GET", "/admin/users", "").StatusCode != 403 {
		t.Errorf("the new password or the customer role does not reach login: %d %s", r.StatusCode, r.Body)
	}
}

// A closed admin's login, and a refresh of its session, hold no admin
// token: the role a login of a closed account gets is a customer's
// (users.LoginRole), so /admin routes are 403 to it. Reopened by another
// admin, the account logs in as an admin again. On both stores.
func TestClosedAdminLogsInAsCustomer(t *testing.T) {
	servicetest.On(t, func(t *testing.T, on servicetest.Option) {
		on.Demo = true
		api := servicetest.New(t, on)
		other := api.As(t, 9, quire.RoleAdmin)
		other.Expect(t, "POST", "/users/1/close", "", http.StatusOK)
		tokens := func() (access, refreshed string) {
			t.Helper()
			var tok httpapi.TokenResponse
			r := postLogin(t, api, demo.AdminEmail, demo.AdminPassword)
			if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.Body), &tok) != nil {
				t.Fatalf("login: %d %s", r.StatusCode, r.Body)
			}
			var again httpapi.TokenResponse
			if r := refresh(t, api, tok.RefreshToken); r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.Body), &again) != nil {
				t.Fatalf("refresh: %d %s", r.StatusCode, r.Body)
			}
			return tok.AccessToken, again.AccessToken
		}
		login, refreshed := tokens()
		for name, token := range map[string]string{"login": login, "refresh": refreshed} {
			api.Bearer(token).ExpectProblem(t, "GET", "/admin/users", "", http.StatusForbidden, quire.EFORBIDDEN)
			t.Logf("a closed admin's %s: /admin/users refused", name)
		}
		other.Expect(t, "PUT", "/users/1", fmt.Sprintf(`{"email":%q,"first_name":"Ada","last_name":"Admin","role":"admin","status":"ACTIVE"}`,
			demo.AdminEmail), http.StatusOK)
		login, refreshed = tokens()
		for _, token := range []string{login, refreshed} {
			api.Bearer(token).Expect(t, "GET", "/admin/users", "", http.StatusOK)
		}
	})
}
