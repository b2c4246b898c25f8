package users_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// TestCustomerCannotCreateMoney: money reaches an account only from the
// back office. The owner's own deposit, in any version, with or without an
// idempotency key, is 403 forbidden through the gateway, and leaves the
// balance as it was and no idempotency record behind.
func TestCustomerCannotCreateMoney(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true}) // scans DynamoDB's records
	u := signUp(t, api, "ada@example.com")
	owner := as(t, api, u)
	own := fmt.Sprintf("/users/%d", u.ID)
	admin(t, api).Expect(t, "POST", own+"/deposit", `{"amount": 20.00}`, 200) // without a key: no record
	for _, prefix := range []string{"", "/api/v1", "/api/v2"} {
		for _, header := range [][]string{nil, {"Idempotency-Key", "ada-tops-up" + prefix}, {"X-Idempotency-Key", "ada-again" + prefix}} {
			p := owner.ExpectProblem(t, "POST", prefix+own+"/deposit", `{"amount": 25.00}`, 403, quire.EFORBIDDEN, header...)
			if p.Status != 403 || p.Detail == "" {
				t.Errorf("POST %s/deposit %q: problem %+v", prefix+own, header, p)
			}
		}
	}
	if got := getAccount(t, owner, own).Balance; got != "20.00" {
		t.Errorf("after the owner's deposits, balance %s, want 20.00 as the admin left it", got)
	}
	out, err := api.DB.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(api.Tables.Physical(routes.TableIdempotency))})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 0 {
		t.Errorf("%d idempotency records after refused deposits, want none: %v", len(out.Items), out.Items)
	}
	// The key was not taken: the admin's deposit under the owner's key is
	// the admin's own (keys belong to their caller) and runs.
	r := admin(t, api).Do(t, "POST", own+"/deposit", `{"amount": 25.00}`, "Idempotency-Key", "ada-tops-up")
	if r.StatusCode != 200 || r.Header.Get(rest.ReplayedHeader) != "" || servicetest.Decode[account](t, r).Balance != "45.00" {
		t.Errorf("the admin's deposit = %d %s, replayed %q; want 200 with 45.00, not replayed", r.StatusCode, r.Body, r.Header.Get(rest.ReplayedHeader))
	}
}

// actions are a user's actions by link relation, in the order that
// following them leaves the others possible (closing ends deposits).
var actions = []struct{ rel, path, body string }{
	{"deposit", "/deposit", `{"amount": 1.00}`},
	{"close_account", "/close", ""},
}

// TestLinksFollowTheCaller: a user's _links name the actions its caller may
// take now, exactly: an admin deposits and closes, the owner closes, nobody
// acts on a closed account, and sign-up's anonymous caller may do nothing.
// Each link followed by the same caller is not refused (403 or 409), and
// each action left out is: nobody sees an action they would be refused.
func TestLinksFollowTheCaller(t *testing.T) {
	api := servicetest.New(t)
	for _, prefix := range []string{"", "/api/v1", "/api/v2"} {
		for i, tc := range []struct {
			name   string
			admin  bool     // read by an admin, not by the owner
			closed bool     // the owner closed the account first
			want   []string // link relations
		}{
			{"admin reads an active customer", true, false, []string{"close_account", "deposit"}},
			{"owner reads their active account", false, false, []string{"close_account"}},
			{"admin reads a closed account", true, true, nil},
			{"owner reads their closed account", false, true, nil},
		} {
			t.Run(strings.TrimPrefix(prefix+"/", "/")+tc.name, func(t *testing.T) {
				t.Parallel()
				u := signUp(t, api, fmt.Sprintf("reader%d%s@example.com", i, strings.ReplaceAll(prefix, "/", ".")))
				path := fmt.Sprintf("%s/users/%d", prefix, u.ID)
				owner, who := as(t, api, u), as(t, api, u)
				if tc.admin {
					who = admin(t, api)
				}
				admin(t, api).Expect(t, "POST", path+"/deposit", `{"amount": 10.00}`, 200)
				if tc.closed {
					owner.Expect(t, "POST", path+"/close", "", 200)
				}
				got := getAccount(t, who, path)
				if diff := cmp.Diff(linksOf(path, tc.want), got.Links); diff != "" {
					t.Fatalf("GET %s _links (-want +got):\n%s", path, diff)
				}
				// What is left out is refused, and changes nothing; what is
				// offered goes through.
				for _, a := range actions {
					if _, ok := got.Links[a.rel]; !ok {
						r := who.Do(t, "POST", path+a.path, a.body)
						if r.StatusCode != 403 && r.StatusCode != 409 {
							t.Errorf("%s, not offered: POST %s = %d %s; want 403 or 409", a.rel, path+a.path, r.StatusCode, r.Body)
						}
					}
				}
				if after := getAccount(t, who, path); after.Balance != "10.00" || after.Status != got.Status {
					t.Fatalf("refused actions changed the account: %+v, then %+v", got, after)
				}
				followLinks(t, who, path, got, tc.want)
			})
		}
		t.Run(strings.TrimPrefix(prefix+"/", "/")+"sign-up", func(t *testing.T) {
			t.Parallel()
			body := `{"email":"new%s@example.com","first_name":"Ada","last_name":"Lovelace","password":"correct horse"}`
			if prefix == "/api/v2" {
				body = `{"email":"new%s@example.com","name":"Ada Lovelace","password":"correct horse"}`
			}
			r := api.Do(t, "POST", prefix+"/users", fmt.Sprintf(body, strings.ReplaceAll(prefix, "/", ".")))
			if r.StatusCode != 201 {
				t.Fatalf("POST %s/users = %d %s", prefix, r.StatusCode, r.Body)
			}
			if !strings.HasSuffix(r.Body, `,"_links":{}}`) {
				t.Errorf("sign-up's answer offers actions to an anonymous caller: %s", r.Body)
			}
		})
	}
}

// followLinks follows, as who, each link of the account got that the user
// at path showed with the relations want, in the order of actions: none is
// refused, and each answer offers what who may do next.
func followLinks(t *testing.T, who *servicetest.Client, path string, got account, want []string) {
	t.Helper()
	balance, status := got.Balance, got.Status
	for _, a := range actions {
		href, ok := got.Links[a.rel]
		if !ok {
			continue
		}
		if now := getAccount(t, who, path); now.Links[a.rel] != href {
			t.Fatalf("%s was offered, then not: %v", a.rel, now.Links)
		}
		r := who.Do(t, "POST", href, a.body)
		if r.StatusCode != 200 {
			t.Fatalf("following %s: POST %s = %d %s", a.rel, href, r.StatusCode, r.Body)
		}
		next := want
		if a.rel == "deposit" {
			balance = "11.00" // the 10.00 every case starts with, and 1.00
		} else {
			status, next = "CLOSED", nil
		}
		answer := servicetest.Decode[account](t, r)
		if answer.Balance != balance || answer.Status != status {
			t.Errorf("after %s: balance %s, status %s; want %s, %s", a.rel, answer.Balance, answer.Status, balance, status)
		}
		if diff := cmp.Diff(linksOf(path, next), answer.Links); diff != "" {
			t.Errorf("the answer to %s: _links (-want +got):\n%s", a.rel, diff)
		}
	}
	if got := getAccount(t, who, path); got.Status != status || got.Balance != balance {
		t.Errorf("stored: %+v; want %s with %s (a closed account keeps its balance)", got, status, balance)
	}
}

// linksOf returns the _links of the user at path that name rels.
func linksOf(path string, rels []string) map[string]string {
	links := map[string]string{}
	for _, a := range actions {
		if slices.Contains(rels, a.rel) {
			links[a.rel] = path + a.path
		}
	}
	return links
}
