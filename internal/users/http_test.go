package users_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

type user struct {
	ID        int64  `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Role      string `json:"role"`
	Status    string `json:"status"`
	Balance   json.Number
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
	Links     map[string]string `json:"_links"`
}

// signUp creates a customer through the public sign-up.
func signUp(t *testing.T, api *servicetest.API, email string) user {
	t.Helper()
	r := api.Do(t, "POST", "/users", fmt.Sprintf(`{"email":%q,"first_name":"Ada","last_name":"Lovelace","password":"correct horse"}`, email))
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("POST /users = %d %s", r.StatusCode, r.Body)
	}
	return servicetest.Decode[user](t, r)
}

// adminID is the tests' admin, whose account admin stores: a user of
// every list, first by id.
const adminID = 1

// admin returns a client with an admin's token, whose account exists.
func admin(t *testing.T, api *servicetest.API) *servicetest.Client {
	return api.As(t, adminID, quire.RoleAdmin)
}

// as returns a client with u's token.
func as(t *testing.T, api *servicetest.API, u user) *servicetest.Client {
	return api.As(t, quire.ID(u.ID), quire.Role(u.Role))
}

// listAll follows next links from path?limit as c and returns every user.
func listAll(t *testing.T, c *servicetest.Client, path string, limit int) (all []user, pages int) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	next := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
	link := regexp.MustCompile(`^<([^>]+)>; rel="next"$`)
	for next != "" {
		r := c.Do(t, "GET", next, "")
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s = %d %s", next, r.StatusCode, r.Body)
		}
		page := servicetest.Decode[[]user](t, r)
		if len(page) > limit {
			t.Fatalf("page of %d users for limit %d", len(page), limit)
		}
		all, pages, next = append(all, page...), pages+1, ""
		if l := r.Header.Get("Link"); l != "" {
			m := link.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("Link %q", l)
			}
			next = strings.TrimPrefix(m[1], r.Request.URL.Scheme+"://"+r.Request.URL.Host)
		}
	}
	return all, pages
}

func TestCreateAndGet(t *testing.T) {
	api := servicetest.New(t)
	r := api.Do(t, "POST", "/users", `{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","password":"correct horse","balance":1000,"id":7,"role":"admin","status":"CLOSED"}`)
	if r.StatusCode != 201 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST /users = %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	u := servicetest.Decode[user](t, r)
	if u.ID <= 0 || u.ID == 7 || u.Email != "ada@example.com" || u.CreatedAt == "" {
		t.Errorf("created %+v", u)
	}
	if u.Role != "customer" || u.Status != "ACTIVE" {
		t.Errorf("sign-up made a %s %s user; want an ACTIVE customer whatever the body says", u.Status, u.Role)
	}
	if !strings.Contains(r.Body, `"balance":0.00`) {
		t.Errorf("balance is not an exact 0.00 (a client cannot set it): %s", r.Body)
	}
	if strings.Contains(r.Body, "password") || strings.Contains(r.Body, "correct horse") {
		t.Errorf("the response carries the password: %s", r.Body)
	}
	if want := fmt.Sprintf("%s/users/%d", api.URL, u.ID); r.Header.Get("Location") != want {
		t.Errorf("Location = %q, want %q", r.Header.Get("Location"), want)
	}
	// Sign-up's caller is nobody yet, who may take no action; the owner
	// reads the same user with the action the owner may take.
	if !strings.HasSuffix(r.Body, `,"_links":{}}`) {
		t.Errorf("sign-up's answer offers actions to an anonymous caller: %s", r.Body)
	}
	want := strings.TrimSuffix(r.Body, `{}}`) + fmt.Sprintf(`{"close_account":"/users/%d/close"}}`, u.ID)
	got := as(t, api, u).Do(t, "GET", fmt.Sprintf("/users/%d", u.ID), "")
	if got.StatusCode != 200 || got.Body != want {
		t.Errorf("GET = %d %s\nwant the created body with the owner's links %s", got.StatusCode, got.Body, want)
	}
}

// TestPasswordIsStoredHashed reads the stored items: the password is kept
// only as an argon2id hash, on the email's reservation (for login) and the
// user item (for a change of email), and no index of the users table
// projects it.
func TestPasswordIsStoredHashed(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{DynamoDB: true}) // reads DynamoDB's items
	u := signUp(t, api, "ada@example.com")
	table := aws.String(api.Tables.Physical("users"))
	get := func(pk string) map[string]types.AttributeValue {
		out, err := api.DB.GetItem(t.Context(), &dynamodb.GetItemInput{
			TableName: table, Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	reservation, user := get("email#ada@example.com"), get(fmt.Sprintf("user#%d", u.ID))
	hash, ok := reservation["password_hash"].(*types.AttributeValueMemberS)
	if !ok || !strings.HasPrefix(hash.Value, "$argon2id$") {
		t.Fatalf("stored password_hash = %v", reservation["password_hash"])
	}
	if mirror, ok := user["password_hash"].(*types.AttributeValueMemberS); !ok || mirror.Value != hash.Value {
		t.Errorf("the user item's password_hash %v is not the reservation's", user["password_hash"])
	}
	for _, item := range []map[string]types.AttributeValue{reservation, user} {
		for name, v := range item {
			if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, "correct horse") {
				t.Errorf("attribute %s holds the password", name)
			}
		}
	}
	for index, key := range map[string]string{"list": "list_pk", "active": "active_pk", "role": "role_pk"} {
		out, err := api.DB.Scan(t.Context(), &dynamodb.ScanInput{TableName: table, IndexName: aws.String(index)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Items) == 0 {
			t.Errorf("index %s holds no user", index)
		}
		for _, item := range out.Items {
			if _, ok := item[key]; !ok || item["password_hash"] != nil || item["email"] != nil {
				t.Errorf("index %s projects %v", index, slices.Collect(maps.Keys(item)))
			}
		}
	}
}

func TestSignUpPassword(t *testing.T) {
	api := servicetest.New(t)
	for _, tc := range []struct{ name, password string }{
		{"missing", ``},
		{"too short", `,"password":"1234567"`},
		{"too long", `,"password":"` + strings.Repeat("é", 129) + `"`},
		{"not a string", `,"password":12345678`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Do(t, "POST", "/users", `{"email":"ada@example.com","first_name":"Ada","last_name":"L"`+tc.password+`}`)
			p := servicetest.WantProblem(t, r, 400, "invalid")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != "/password" {
				t.Errorf("errors = %+v, want one for /password", p.Errors)
			}
		})
	}
	if r := api.Do(t, "POST", "/users", `{"email":"ada@example.com","first_name":"Ada","last_name":"L","password":"12345678"}`); r.StatusCode != 201 {
		t.Errorf("an 8-character password: %d %s", r.StatusCode, r.Body)
	}
}

func TestDuplicateEmail(t *testing.T) {
	api := servicetest.New(t)
	signUp(t, api, "ada@example.com")
	r := api.Do(t, "POST", "/users", `{"email":"ADA@example.com","first_name":"Other","last_name":"One","password":"correct horse"}`)
	servicetest.WantProblem(t, r, 409, quire.EEMAILTAKEN)
	if all, _ := listAll(t, admin(t, api), "/admin/users", 10); len(all) != 2 {
		t.Errorf("%d users stored, want the admin and one", len(all))
	}
}

// TestConcurrentSignUps sends one email many times at once: exactly one
// request creates a user. Each of the others finds the email taken, a
// guess of it: the first login.MaxLoginFailures are 409 email-taken, and
// the rest 429, as logins of a locked email are.
func TestConcurrentSignUps(t *testing.T) {
	api := servicetest.New(t)
	const n = 10
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			statuses <- api.Do(t, "POST", "/users", `{"email":"race@example.com","first_name":"R","last_name":"C","password":"correct horse"}`).StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if diff := cmp.Diff(map[int]int{201: 1, 409: login.MaxLoginFailures, 429: n - 1 - login.MaxLoginFailures}, count); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if all, _ := listAll(t, admin(t, api), "/admin/users", 10); len(all) != 2 {
		t.Errorf("%d users stored, want the admin and one", len(all))
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)
	c := admin(t, api)
	before := c.Do(t, "GET", path, "").Body
	const valid = `"first_name":"X","last_name":"Y","password":"correct horse"`
	for _, tc := range []struct {
		method, path, body, contentType string
		status                          int
		code                            string
	}{
		{"POST", "/users", `{"email":"x@example.com",` + valid + `}`, "text/plain", 415, "media-type"},
		{"POST", "/users", `{"email":"x@example.com",` + valid, "application/json", 400, "invalid"},
		{"POST", "/users", `{"email":"x@example.com",` + valid + `,"nickname":"Z"}`, "application/json", 400, "invalid"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"` + strings.Repeat("x", 70000) + `","last_name":"Y"}`, "application/json", 413, "too-large"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"X","last_name":"Y","password":"short"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"not-an-email","first_name":"","last_name":"Y","role":"admin","status":"ACTIVE"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"x@example.com"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"x@example.com","first_name":"X","last_name":"Y","role":"admin","status":"ACTIVE","password":"short"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"x@example.com","first_name":"X","last_name":"Y","role":"admin","status":"ACTIVE"}`, "application/xml", 415, "media-type"},
		{"PUT", "/users/999999", `{"email":"x@example.com","first_name":"X","last_name":"Y","role":"admin","status":"ACTIVE"}`, "application/json", 404, "not-found"},
		{"DELETE", "/users/999999", "", "", 404, "not-found"},
		{"GET", "/users/0", "", "", 404, "not-found"},
		{"GET", "/users/abc", "", "", 404, "not-found"},
		{"GET", fmt.Sprintf("/users/0%d", u.ID), "", "", 404, "not-found"},
		{"GET", "/users/-1", "", "", 404, "not-found"},
		{"GET", "/users/99999999999999999999", "", "", 404, "not-found"},
		{"GET", "/users/%25", "", "", 404, "not-found"},
		{"GET", "/users?limit=1000", "", "", 400, "invalid"},
		{"GET", "/users?cursor=bm9wZQ", "", "", 400, "invalid"},
		{"PATCH", path, `{}`, "application/json", 405, "method"},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.contentType, func(t *testing.T) {
			r := c.Do(t, tc.method, tc.path, tc.body, "Content-Type", tc.contentType)
			servicetest.WantProblem(t, r, tc.status, tc.code)
		})
	}
	if after := c.Do(t, "GET", path, "").Body; after != before {
		t.Errorf("user changed:\n%s\n%s", before, after)
	}
	if all, _ := listAll(t, c, "/admin/users", 10); len(all) != 2 {
		t.Errorf("%d users stored, want the admin and one", len(all))
	}
}

func TestReplaceListsEachInvalidField(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	r := admin(t, api).Do(t, "PUT", fmt.Sprintf("/users/%d", u.ID), `{"email":"nope","first_name":" ","last_name":"L","role":"king","status":"ACTIVE"}`)
	p := servicetest.WantProblem(t, r, 400, "invalid")
	var pointers []string
	for _, e := range p.Errors {
		pointers = append(pointers, e.Pointer)
	}
	if diff := cmp.Diff([]string{"/email", "/first_name", "/role"}, pointers); diff != "" {
		t.Errorf("invalid fields (-want +got):\n%s", diff)
	}
}

func TestAdminReplaces(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	other := signUp(t, api, "grace@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)
	c := admin(t, api)

	r := c.Do(t, "PUT", path, `{"email":"countess@example.com","first_name":"Augusta","last_name":"King","role":"admin","status":"CLOSED","balance":99}`)
	if r.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", r.StatusCode, r.Body)
	}
	got := servicetest.Decode[user](t, r)
	want := u
	want.Email, want.FirstName, want.LastName, want.Role, want.Status = "countess@example.com", "Augusta", "King", "admin", "CLOSED"
	want.UpdatedAt = got.UpdatedAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PUT body (-want +got):\n%s", diff)
	}
	if stored := c.Do(t, "GET", path, ""); stored.Body != r.Body {
		t.Errorf("GET after PUT = %s\nwant %s", stored.Body, r.Body)
	}
	// The old email is free again; the new one is taken.
	signUp(t, api, "ada@example.com")
	servicetest.WantProblem(t, api.Do(t, "POST", "/users", `{"email":"Countess@example.com","first_name":"A","last_name":"B","password":"correct horse"}`), 409, quire.EEMAILTAKEN)
	// Taking another user's email is refused and changes nothing.
	servicetest.WantProblem(t, c.Do(t, "PUT", path, `{"email":"grace@example.com","first_name":"A","last_name":"B","role":"admin","status":"ACTIVE"}`), 409, quire.EEMAILTAKEN)
	if stored := c.Do(t, "GET", path, ""); stored.Body != r.Body {
		t.Errorf("a failed PUT changed the user: %s", stored.Body)
	}
	// Same email in another case: allowed, stored as sent.
	r = c.Do(t, "PUT", fmt.Sprintf("/users/%d", other.ID), `{"email":"Grace@Example.com","first_name":"Grace","last_name":"Hopper","role":"customer","status":"ACTIVE"}`)
	if r.StatusCode != 200 || servicetest.Decode[user](t, r).Email != "Grace@Example.com" {
		t.Errorf("PUT with the email in another case = %d %s", r.StatusCode, r.Body)
	}
	// An admin must send role and status: PUT replaces the whole user.
	p := servicetest.WantProblem(t, c.Do(t, "PUT", path, `{"email":"a@example.com","first_name":"A","last_name":"B"}`), 400, "invalid")
	if len(p.Errors) != 2 {
		t.Errorf("errors = %+v; want role and status required", p.Errors)
	}
}

// TestCustomerReplacesOwnUser: a customer changes their email, names and
// password; role, status and balance in the body are ignored.
func TestCustomerReplacesOwnUser(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	c := as(t, api, u)
	path := fmt.Sprintf("/users/%d", u.ID)
	r := c.Do(t, "PUT", path, `{"email":"countess@example.com","first_name":"Augusta","last_name":"King","role":"admin","status":"CLOSED","balance":1000000,"current_password":"correct horse"}`)
	if r.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", r.StatusCode, r.Body)
	}
	got := servicetest.Decode[user](t, r)
	if got.Role != "customer" || got.Status != "ACTIVE" || got.Balance != "0.00" || got.Email != "countess@example.com" {
		t.Errorf("customer PUT stored %+v; want role, status and balance unchanged", got)
	}
	if stored := c.Do(t, "GET", path, ""); stored.Body != r.Body {
		t.Errorf("GET after PUT = %s\nwant %s", stored.Body, r.Body)
	}
	// GET then PUT back what came: a no-op that succeeds.
	if r2 := c.Do(t, "PUT", path, r.Body); r2.StatusCode != 200 {
		t.Errorf("PUT of the GET body = %d %s", r2.StatusCode, r2.Body)
	}
}

// TestCustomersSeeOnlyThemselves: another user's id answers 404, as a
// missing user does, and changes nothing.
func TestCustomersSeeOnlyThemselves(t *testing.T) {
	api := servicetest.New(t)
	grace := signUp(t, api, "grace@example.com")
	alan := signUp(t, api, "alan@example.com")
	c := as(t, api, grace)
	other := fmt.Sprintf("/users/%d", alan.ID)
	before := admin(t, api).Do(t, "GET", other, "").Body
	for _, tc := range []struct{ method, body string }{
		{"GET", ""},
		{"PUT", `{"email":"mine@example.com","first_name":"A","last_name":"B"}`},
		{"DELETE", ""},
	} {
		p := servicetest.WantProblem(t, c.Do(t, tc.method, other, tc.body), 404, "not-found")
		missing := servicetest.WantProblem(t, c.Do(t, tc.method, "/users/999999", tc.body), 404, "not-found")
		if strings.ReplaceAll(p.Detail, fmt.Sprint(alan.ID), "999999") != missing.Detail {
			t.Errorf("%s of another user says %q, of a missing one %q: they must look alike", tc.method, p.Detail, missing.Detail)
		}
	}
	// The client cannot tell the two apart; the request's log line can.
	r := c.Do(t, "GET", other, "")
	if got, _ := servicetest.Line(t, r.Header.Get("X-Amzn-Requestid"))["error"].(string); !strings.Contains(got, "another user's") {
		t.Errorf("the log line of GET of another user says error=%q, want why: another user's id", got)
	}
	if after := admin(t, api).Do(t, "GET", other, "").Body; after != before {
		t.Errorf("another customer changed the user:\n%s\n%s", before, after)
	}
	r = c.Do(t, "GET", "/users", "")
	if got := servicetest.Decode[[]user](t, r); r.StatusCode != 200 || len(got) != 1 || got[0].ID != grace.ID {
		t.Errorf("GET /users as a customer = %d %s; want only their own user", r.StatusCode, r.Body)
	}
	servicetest.WantProblem(t, c.Do(t, "GET", "/admin/users", ""), 403, "forbidden")
}

func TestTokenRequired(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	for _, path := range []string{"/users", fmt.Sprintf("/users/%d", u.ID), "/admin/users"} {
		for _, h := range []string{"", "Bearer", "Bearer nope", "Basic YTpi"} {
			r := api.Do(t, "GET", path, "", "Authorization", h)
			servicetest.WantProblem(t, r, 401, "unauthorized")
			if got := r.Header.Get("WWW-Authenticate"); got != rest.BearerChallenge {
				t.Errorf("GET %s with %q: WWW-Authenticate %q", path, h, got)
			}
		}
	}
}

func TestAdminLists(t *testing.T) {
	api := servicetest.New(t)
	active := signUp(t, api, "ada@example.com")
	closed := signUp(t, api, "grace@example.com")
	c := admin(t, api)
	r := c.Do(t, "PUT", fmt.Sprintf("/users/%d", closed.ID), `{"email":"grace@example.com","first_name":"G","last_name":"H","role":"customer","status":"CLOSED"}`)
	if r.StatusCode != 200 {
		t.Fatalf("close: %d %s", r.StatusCode, r.Body)
	}
	ids := func(us []user) []int64 {
		var out []int64
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	all, _ := listAll(t, c, "/admin/users", 10)
	if diff := cmp.Diff([]int64{adminID, active.ID, closed.ID}, ids(all)); diff != "" {
		t.Errorf("/admin/users (-want +got):\n%s", diff)
	}
	act, _ := listAll(t, c, "/users", 10)
	if diff := cmp.Diff([]int64{adminID, active.ID}, ids(act)); diff != "" {
		t.Errorf("/users lists active users only (-want +got):\n%s", diff)
	}
	// Reopened, the user is listed again.
	c.Do(t, "PUT", fmt.Sprintf("/users/%d", closed.ID), `{"email":"grace@example.com","first_name":"G","last_name":"H","role":"customer","status":"ACTIVE"}`)
	if act, _ := listAll(t, c, "/users", 10); len(act) != 3 {
		t.Errorf("after reopening, /users lists %d users", len(act))
	}
}

func TestDelete(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	keep := signUp(t, api, "grace@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)
	c := as(t, api, u) // a customer may delete their own account, with its password
	r := c.Do(t, "DELETE", path, `{"current_password":"correct horse"}`)
	if r.StatusCode != 204 || r.Body != "" {
		t.Fatalf("DELETE = %d %q", r.StatusCode, r.Body)
	}
	for _, p := range []string{path, "/users"} { // the token outlives its account, which decides
		servicetest.WantProblem(t, c.Do(t, "GET", p, ""), 401, "unauthorized")
	}
	servicetest.WantProblem(t, c.Do(t, "DELETE", path, ""), 401, "unauthorized")
	servicetest.WantProblem(t, admin(t, api).Do(t, "DELETE", path, ""), 404, "not-found")
	all, _ := listAll(t, admin(t, api), "/admin/users", 10)
	if len(all) != 2 || all[0].ID != adminID || all[1].ID != keep.ID {
		t.Errorf("users after delete: %+v", all)
	}
	signUp(t, api, "ada@example.com") // the email is free again
}

func TestListPages(t *testing.T) {
	api := servicetest.New(t)
	c := admin(t, api)
	want := []int64{adminID}
	for i := range 7 {
		want = append(want, signUp(t, api, fmt.Sprintf("u%d@example.com", i)).ID)
	}
	for _, path := range []string{"/users", "/admin/users"} {
		for _, tc := range []struct{ limit, pages int }{{2, 4}, {8, 1}, {3, 3}, {100, 1}} {
			all, pages := listAll(t, c, path, tc.limit)
			var ids []int64
			for _, u := range all {
				ids = append(ids, u.ID)
			}
			if diff := cmp.Diff(want, ids); diff != "" || pages != tc.pages {
				t.Errorf("%s limit %d: %d pages, want %d; ids (-want +got):\n%s", path, tc.limit, pages, tc.pages, diff)
			}
		}
	}
	if r := c.Do(t, "GET", "/users", ""); len(servicetest.Decode[[]user](t, r)) != 8 || r.Header.Get("Link") != "" {
		t.Errorf("default page: %s, Link %q", r.Body, r.Header.Get("Link"))
	}
}

// A list with no users is an empty array: the customers, or the page
// after the last user, of tables that hold only the admin.
func TestEmptyListIsAnArray(t *testing.T) {
	api := servicetest.New(t)
	after := base64.RawURLEncoding.EncodeToString([]byte(quire.ID(adminID).String()))
	for _, path := range []string{"/users?role=customer", "/admin/users?cursor=" + after} {
		if r := admin(t, api).Do(t, "GET", path, ""); r.StatusCode != 200 || r.Body != "[]" {
			t.Errorf("GET %s = %d %q", path, r.StatusCode, r.Body)
		}
	}
}

// A version the API does not have reaches the function as on API Gateway,
// whose tree /api/{version}/... takes any: a protected route runs the
// authorizer first (401 without a token), and the function answers 404.
func TestAVersionTheAPIDoesNotHave(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	path := fmt.Sprintf("/api/v9/users/%d", u.ID)
	// Not through api.Do: the document has no such path, whose answers
	// are 404 but this one, which API Gateway's authorizer gives first.
	r0, err := http.Get(api.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	r0.Body.Close()
	if r0.StatusCode != http.StatusUnauthorized || r0.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("GET %s without a token = %d, want 401 from the authorizer", path, r0.StatusCode)
	}
	r := as(t, api, u).Do(t, "GET", path, "")
	if p := servicetest.Decode[rest.Problem](t, r); r.StatusCode != http.StatusNotFound || p.Type != rest.ProblemType(quire.ENOTFOUND) || r.Header.Get("X-Amzn-Requestid") == "" {
		t.Errorf("GET %s = %d %s, want the function's 404 problem", path, r.StatusCode, r.Body)
	}
	if r := api.Do(t, "GET", "/api/v9/no-such-path", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/v9/no-such-path = %d, want 404", r.StatusCode)
	}
}
