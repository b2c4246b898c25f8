package users_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// Changing one's own email or password needs the current password, so that
// a stolen access token cannot take the account over; a wrong or missing
// one changes nothing. Names change without it, and an admin changing
// another user's account needs none.
func TestCredentialChangesProveThePassword(t *testing.T) {
	const body = `{"email":%q,"first_name":"Ada","last_name":"Lovelace"%s}`
	for _, c := range []struct {
		name    string
		email   string
		extra   string // more members of the body
		byAdmin bool
		status  int
		code    string // the problem's, for an error
		pointer string // the invalid field's, for a 400
	}{
		{name: "names only", email: "ada@example.com", status: 200},
		{name: "email without the password", email: "new@example.com", status: 400, code: quire.EINVALID, pointer: "/current_password"},
		{name: "email, wrong password", email: "new@example.com", extra: `,"current_password":"wrong horse"`, status: 403, code: quire.EWRONGPASSWORD},
		{name: "email, empty password", email: "new@example.com", extra: `,"current_password":""`, status: 403, code: quire.EWRONGPASSWORD},
		{name: "email", email: "new@example.com", extra: `,"current_password":"correct horse"`, status: 200},
		{name: "email in another case", email: "ADA@example.com", status: 200},
		{name: "password without the password", email: "ada@example.com", extra: `,"password":"battery staple"`, status: 400, code: quire.EINVALID, pointer: "/current_password"},
		{name: "password, wrong password", email: "ada@example.com", extra: `,"password":"battery staple","current_password":"battery staple"`, status: 403, code: quire.EWRONGPASSWORD},
		{name: "password", email: "ada@example.com", extra: `,"password":"battery staple","current_password":"correct horse"`, status: 200},
		{name: "an admin, another's email and password", email: "new@example.com", extra: `,"password":"battery staple","role":"customer","status":"ACTIVE"`, byAdmin: true, status: 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := servicetest.New(t)
			u := signUp(t, api, "ada@example.com")
			who := as(t, api, u)
			if c.byAdmin {
				who = admin(t, api)
			}
			path := fmt.Sprintf("/users/%d", u.ID)
			before := as(t, api, u).Expect(t, "GET", path, "", http.StatusOK).Body
			r := who.Do(t, "PUT", path, fmt.Sprintf(body, c.email, c.extra))
			if r.StatusCode != c.status {
				t.Fatalf("PUT = %d %s, want %d", r.StatusCode, r.Body, c.status)
			}
			after := as(t, api, u).Expect(t, "GET", path, "", http.StatusOK).Body
			if c.status != http.StatusOK {
				p := servicetest.WantProblem(t, r, c.status, c.code)
				if c.pointer != "" && (len(p.Errors) != 1 || p.Errors[0].Pointer != c.pointer) {
					t.Errorf("errors %+v, want one for %s", p.Errors, c.pointer)
				}
				if after != before {
					t.Errorf("a refused change changed the user:\n%s\n%s", before, after)
				}
				logIn(t, api, "ada@example.com", "correct horse", http.StatusOK)
				return
			}
			email := servicetest.Decode[user](t, r).Email
			if email != c.email {
				t.Errorf("email %q, want %q", email, c.email)
			}
			pw := "correct horse"
			if strings.Contains(c.extra, `"password":"battery staple"`) {
				pw = "battery staple"
			}
			logIn(t, api, email, pw, http.StatusOK)
		})
	}
}

// logIn logs in through POST /login and fails unless it answers status.
func logIn(t *testing.T, api *servicetest.API, email, password string, status int) {
	t.Helper()
	r := api.Do(t, "POST", "/login", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
	if r.StatusCode != status {
		t.Errorf("login as %s with %q = %d %s, want %d", email, password, r.StatusCode, r.Body, status)
	}
	if status == http.StatusOK && r.Header.Get("Content-Type") == rest.ProblemMediaType {
		t.Errorf("login answered a problem: %s", r.Body)
	}
}

// A user item stored before items carried the password hash changes its
// email as any other: the new email's reservation takes the password from
// the old reservation, so that the user logs in with the new email and the
// same password.
func TestEmailChangeOfAnOlderUserItem(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true}) // writes an item as older releases did
	u := signUp(t, api, "ada@example.com")
	_, err := api.DB.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName:        aws.String(api.Tables.Physical("users")),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("user#%d", u.ID)}},
		UpdateExpression: aws.String("REMOVE password_hash"),
	})
	if err != nil {
		t.Fatal(err)
	}
	as(t, api, u).Expect(t, "PUT", fmt.Sprintf("/users/%d", u.ID),
		`{"email":"countess@example.com","first_name":"Ada","last_name":"Lovelace","current_password":"correct horse"}`, 200)
	logIn(t, api, "countess@example.com", "correct horse", http.StatusOK)
	logIn(t, api, "ada@example.com", "correct horse", http.StatusUnauthorized)
}
