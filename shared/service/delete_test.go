package service_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/demo"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/service/servicetest"
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
