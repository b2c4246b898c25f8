package service_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// count returns how many items of table have the partition key pk.
func count(t *testing.T, db *dynamodb.Client, table, pk string) int {
	t.Helper()
	out, err := db.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :pk"), ConsistentRead: aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// scanCount returns how many items table holds.
func scanCount(t *testing.T, db *dynamodb.Client, table string) int {
	t.Helper()
	out, err := db.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// Deleting an account removes what belongs only to it: its sessions, its
// email's failed logins and its cart. Its orders stay, as the shop's
// records, readable by an admin.
func TestDeleteRemovesWhatBelongsToTheAccount(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true, Demo: true}) // counts DynamoDB's items
	admin := api.As(t, 1, quire.RoleAdmin)
	login := func(password string) (int, string) {
		body, _ := json.Marshal(map[string]string{"email": demo.CustomerEmail, "password": password})
		r := api.Do(t, "POST", "/login", string(body))
		var tok struct {
			RefreshToken string `json:"refresh_token"`
		}
		if err := json.Unmarshal([]byte(r.Body), &tok); err != nil {
			t.Fatal(err)
		}
		return r.StatusCode, tok.RefreshToken
	}
	status, refresh := login(demo.CustomerPassword)
	if status != http.StatusOK || refresh == "" {
		t.Fatalf("login: %d, refresh token %q", status, refresh)
	}
	login(demo.CustomerPassword) // a second session
	if status, _ := login("not the password"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", status)
	}
	sessions, carts := api.Tables.Physical(routes.TableSessions), api.Tables.Physical(routes.TableCarts)
	mine := count(t, api.DB, sessions, "user#2")
	if mine < 2 {
		t.Fatalf("%d sessions of Grace before, want her 2 or more", mine)
	}
	before := scanCount(t, api.DB, sessions)

	admin.Expect(t, "DELETE", "/users/2", "", http.StatusNoContent)

	if n := count(t, api.DB, sessions, "user#2"); n != 0 {
		t.Errorf("%d sessions of the deleted user left", n)
	}
	if n := scanCount(t, api.DB, sessions); n != before-mine-1 {
		t.Errorf("%d items in the sessions table, want %d: her %d sessions and her failed login gone, nothing else", n, before-mine-1, mine)
	}
	if n := count(t, api.DB, carts, "cart#2"); n != 0 {
		t.Errorf("the deleted user's cart is still stored")
	}
	r := api.Do(t, "POST", "/tokens", `{"refresh_token":"`+refresh+`"}`)
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the deleted user's refresh token: %d %s", r.StatusCode, r.Body)
	}
	admin.Expect(t, "GET", "/orders/1", "", http.StatusOK)
}

// Deleting one's own account takes the current password, as a change of
// its email does, and a zero balance: without the password it is 400
// naming current_password, with a wrong one 403 (a guess counted against
// the email), and while the account holds money 409 balance-not-zero
// naming the amount; nothing changes. With both, it is gone, and its
// user.deleted event says it held nothing. An admin deletes a funded
// account with no body, and the event records the balance, which the shop
// refunds outside Quire.
func TestDeletingOnesOwnAccount(t *testing.T) {
	servicetest.On(t, func(t *testing.T, o servicetest.Option) {
		api := servicetest.New(t, o)
		admin := api.As(t, 1, quire.RoleAdmin)
		signUp := func(email string) (*servicetest.Client, string) {
			r := api.Do(t, "POST", "/users", fmt.Sprintf(`{"email":%q,"first_name":"Edith","last_name":"Clarke","password":"a long passphrase"}`, email))
			u := servicetest.Decode[struct{ ID quire.ID }](t, r)
			return api.Gone(t, u.ID, quire.RoleCustomer), "/users/" + u.ID.String()
		}
		deleted := func(path string) map[string]any {
			t.Helper()
			for _, ev := range api.Events(t) {
				if ev.Type == quire.EventUserDeleted && ev.Subject == path {
					var data map[string]any
					if err := json.Unmarshal(ev.Data, &data); err != nil {
						t.Fatal(err)
					}
					return data
				}
			}
			return nil
		}
		const right, wrong = `{"current_password":"a long passphrase"}`, `{"current_password":"not the password"}`

		funded, path := signUp("funded@example.com")
		admin.Expect(t, "POST", path+"/deposit", `{"amount":5.00}`, http.StatusOK)
		before := admin.Expect(t, "GET", path, "", http.StatusOK).Body
		p := funded.ExpectProblem(t, "DELETE", path, "", http.StatusBadRequest, quire.EINVALID)
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/current_password" {
			t.Errorf("without current_password: errors %+v, want /current_password", p.Errors)
		}
		funded.ExpectProblem(t, "DELETE", path, wrong, http.StatusForbidden, quire.EWRONGPASSWORD)
		p = funded.ExpectProblem(t, "DELETE", path, right, http.StatusConflict, quire.EBALANCENOTZERO)
		if !strings.Contains(p.Detail, "5.00") {
			t.Errorf("balance-not-zero %q, want it to name the balance, 5.00", p.Detail)
		}
		if after := admin.Expect(t, "GET", path, "", http.StatusOK).Body; after != before || deleted(path) != nil {
			t.Errorf("refused deletions changed the account: %s, was %s", after, before)
		}
		admin.Expect(t, "DELETE", path, "", http.StatusNoContent)
		if got := deleted(path); got["balance"] != 5.0 {
			t.Errorf("user.deleted of a funded account deleted by an admin: %v, want its balance, 5.00", got)
		}

		empty, path := signUp("empty@example.com")
		empty.Expect(t, "DELETE", path, right, http.StatusNoContent)
		if got := deleted(path); got == nil || got["balance"] != 0.0 {
			t.Errorf("user.deleted of one's own account: %v, want a balance of 0", got)
		}
		admin.Expect(t, "GET", path, "", http.StatusNotFound)
	})
}
