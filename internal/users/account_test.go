package users_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/ddbfault"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// account is a user as v1 shows it, with its links and profile.
type account struct {
	user
	Links   map[string]string `json:"_links"`
	Profile *profile          `json:"profile"`
}

type profile struct {
	Bio        string `json:"bio"`
	Location   string `json:"location"`
	Website    string `json:"website"`
	Newsletter bool   `json:"newsletter"`
}

func getAccount(t *testing.T, c *servicetest.Client, path string) account {
	t.Helper()
	r := c.Do(t, "GET", path, "")
	if r.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", path, r.StatusCode, r.Body)
	}
	return servicetest.Decode[account](t, r)
}

// TestDeposit: an admin records money received for an account; the
// amount is exact and bounded, the balance capped, a closed account takes
// none.
func TestDeposit(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	other := signUp(t, api, "grace@example.com")
	c, a := as(t, api, u), admin(t, api)
	path := fmt.Sprintf("/users/%d/deposit", u.ID)
	for _, amount := range []string{"25", "0.10", "0.01"} {
		if r := a.Do(t, "POST", path, `{"amount": `+amount+`}`); r.StatusCode != 200 {
			t.Fatalf("deposit %s: %d %s", amount, r.StatusCode, r.Body)
		}
	}
	balance := func() json.Number { return getAccount(t, c, fmt.Sprintf("/users/%d", u.ID)).Balance }
	if got := balance(); got != "25.11" {
		t.Fatalf("balance %s, want 25.11", got)
	}
	for body, status := range map[string]int{
		`{"amount": 0}`:        400,
		`{"amount": -5}`:       400,
		`{"amount": 1.001}`:    400,
		`{"amount": 1e2}`:      400,
		`{"amount": "5"}`:      400,
		`{"amount": 10000.01}`: 400,
		`{}`:                   400,
		`{"amount": 5, "x":1}`: 400,
		`not json`:             400,
	} {
		servicetest.WantProblem(t, a.Do(t, "POST", path, body), status, quire.EINVALID)
	}
	// A customer deposits to no account, their own or another's (the same
	// 403 for any id, so ids cannot be probed); an admin finds no user that
	// nobody has.
	servicetest.WantProblem(t, c.Do(t, "POST", path, `{"amount": 5}`), 403, quire.EFORBIDDEN)
	servicetest.WantProblem(t, c.Do(t, "POST", fmt.Sprintf("/users/%d/deposit", other.ID), `{"amount": 5}`), 403, quire.EFORBIDDEN)
	servicetest.WantProblem(t, a.Do(t, "POST", fmt.Sprintf("/users/%d/deposit", other.ID+1), `{"amount": 5}`), 404, quire.ENOTFOUND)
	if got := balance(); got != "25.11" {
		t.Errorf("after refused deposits, balance %s, want 25.11", got)
	}
	if r := getAccount(t, as(t, api, other), fmt.Sprintf("/users/%d", other.ID)); r.Balance != "0.00" {
		t.Errorf("the other user's balance is %s", r.Balance)
	}

	// The balance stops at 1,000,000.00.
	for range 99 {
		if r := a.Do(t, "POST", path, `{"amount": 10000}`); r.StatusCode != 200 {
			t.Fatalf("deposit: %d %s", r.StatusCode, r.Body)
		}
	}
	servicetest.WantProblem(t, a.Do(t, "POST", path, `{"amount": 10000}`), 409, quire.EBALANCELIMIT)
	if r := a.Do(t, "POST", path, `{"amount": 9974.89}`); r.StatusCode != 200 || servicetest.Decode[account](t, r).Balance != "1000000.00" {
		t.Errorf("deposit up to the limit: %d %s", r.StatusCode, r.Body)
	}

	c.Do(t, "POST", fmt.Sprintf("/users/%d/close", u.ID), "")
	servicetest.WantProblem(t, a.Do(t, "POST", path, `{"amount": 1}`), 409, quire.EACCOUNTCLOSED)
	if got := balance(); got != "1000000.00" {
		t.Errorf("after a deposit to a closed account, balance %s", got)
	}
}

// TestConcurrentDeposits: deposits that race on one account all land,
// though their transactions conflict as they do on DynamoDB.
func TestConcurrentDeposits(t *testing.T) {
	p, conflicts := servicetest.Conflicts(t)
	api := servicetest.New(t, conflicts)
	defer func() { t.Logf("%d transaction conflicts", p.Injected()[ddbfault.Conflict]) }()
	u := signUp(t, api, "ada@example.com")
	c, a := as(t, api, u), admin(t, api)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r := a.Do(t, "POST", fmt.Sprintf("/users/%d/deposit", u.ID), `{"amount": 1.25}`); r.StatusCode != 200 {
				t.Errorf("a concurrent deposit answered %d %s", r.StatusCode, r.Body)
			}
		})
	}
	wg.Wait()
	if got := getAccount(t, c, fmt.Sprintf("/users/%d", u.ID)).Balance; got != "25.00" {
		t.Errorf("after %d deposits of 1.25 the balance is %s, want 25.00", n, got)
	}
}

func TestClose(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	c := as(t, api, u)
	path := fmt.Sprintf("/users/%d/close", u.ID)
	if r := c.Do(t, "POST", path, ""); r.StatusCode != 200 {
		t.Fatalf("close: %d %s", r.StatusCode, r.Body)
	}
	servicetest.WantProblem(t, c.Do(t, "POST", path, ""), 409, quire.EACCOUNTCLOSED)
	servicetest.WantProblem(t, as(t, api, signUp(t, api, "eve@example.com")).Do(t, "POST", path, ""), 404, quire.ENOTFOUND)
	// Closed accounts leave the active lists, and an admin may reopen them.
	a := admin(t, api)
	if us, _ := listAll(t, a, "/users", 10); len(us) != 2 || us[0].ID != adminID || us[1].Email != "eve@example.com" {
		t.Errorf("active users after closing: %+v", us)
	}
	r := a.Do(t, "PUT", fmt.Sprintf("/users/%d", u.ID), `{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","role":"customer","status":"ACTIVE"}`)
	if r.StatusCode != 200 || len(servicetest.Decode[account](t, r).Links) != 2 {
		t.Errorf("reopen: %d %s", r.StatusCode, r.Body)
	}
}

func TestProfile(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	other := signUp(t, api, "grace@example.com")
	c := as(t, api, u)
	path := fmt.Sprintf("/users/%d/profile", u.ID)
	get := func() profile {
		r := c.Do(t, "GET", path, "")
		if r.StatusCode != 200 {
			t.Fatalf("GET profile: %d %s", r.StatusCode, r.Body)
		}
		return servicetest.Decode[profile](t, r)
	}
	if p := get(); p != (profile{}) {
		t.Errorf("new profile %+v, want empty", p)
	}
	want := profile{Bio: "Wrote the first program.", Location: "London", Website: "https://example.com/ada", Newsletter: true}
	body, _ := json.Marshal(want)
	if r := c.Do(t, "PUT", path, string(body)); r.StatusCode != 200 || servicetest.Decode[profile](t, r) != want {
		t.Fatalf("PUT profile: %d %s", r.StatusCode, r.Body)
	}
	if p := get(); p != want {
		t.Errorf("stored profile %+v, want %+v", p, want)
	}
	for _, bad := range []string{
		`{"website": "ftp://example.com"}`,
		`{"website": "example.com"}`,
		`{"bio": "` + strings.Repeat("x", 501) + `"}`,
		`{"location": "a\u0000b"}`,
		`{"newsletter": "yes"}`,
		`{"twitter": "@ada"}`,
	} {
		servicetest.WantProblem(t, c.Do(t, "PUT", path, bad), 400, quire.EINVALID)
	}
	servicetest.WantProblem(t, c.Do(t, "PUT", fmt.Sprintf("/users/%d/profile", other.ID), `{}`), 404, quire.ENOTFOUND)
	servicetest.WantProblem(t, c.Do(t, "GET", fmt.Sprintf("/users/%d/profile", other.ID), ""), 404, quire.ENOTFOUND)
	if p := get(); p != want {
		t.Errorf("after refused writes, profile %+v", p)
	}

	// embed=profile adds it to users, from the same read.
	if a := getAccount(t, c, fmt.Sprintf("/users/%d?embed=profile", u.ID)); a.Profile == nil || *a.Profile != want {
		t.Errorf("embedded profile %+v", a.Profile)
	}
	if r := c.Do(t, "GET", fmt.Sprintf("/users/%d", u.ID), ""); strings.Contains(r.Body, `"profile"`) {
		t.Errorf("a user without embed has a profile: %s", r.Body)
	}
	r := admin(t, api).Do(t, "GET", "/users?embed=profile", "")
	list := servicetest.Decode[[]account](t, r)
	if len(list) != 3 || list[0].ID != adminID || list[1].Profile == nil || *list[1].Profile != want || list[2].Profile == nil || *list[2].Profile != (profile{}) {
		t.Errorf("GET /users?embed=profile = %s", r.Body)
	}
	servicetest.WantProblem(t, c.Do(t, "GET", "/users?embed=orders", ""), 400, quire.EINVALID)
	// PUT of the user keeps the profile.
	c.Do(t, "PUT", fmt.Sprintf("/users/%d", u.ID), `{"email":"ada@example.com","first_name":"Ada","last_name":"King"}`)
	if p := get(); p != want {
		t.Errorf("after PUT of the user, profile %+v", p)
	}
	// An empty body empties it: PUT replaces the whole profile.
	if r := c.Do(t, "PUT", path, `{}`); r.StatusCode != 200 || get() != (profile{}) {
		t.Errorf("PUT {}: %d %s; stored %+v", r.StatusCode, r.Body, get())
	}
}

func TestRoleFilter(t *testing.T) {
	api := servicetest.New(t)
	a := admin(t, api)
	var admins, customers []int64
	for i := range 5 {
		u := signUp(t, api, fmt.Sprintf("u%d@example.com", i))
		if i%2 == 0 {
			r := a.Do(t, "PUT", fmt.Sprintf("/users/%d", u.ID), fmt.Sprintf(`{"email":"u%d@example.com","first_name":"A","last_name":"B","role":"admin","status":"ACTIVE"}`, i))
			if r.StatusCode != 200 {
				t.Fatalf("make admin: %d %s", r.StatusCode, r.Body)
			}
			admins = append(admins, u.ID)
		} else {
			customers = append(customers, u.ID)
		}
	}
	// A closed admin is not listed.
	a.Do(t, "POST", fmt.Sprintf("/users/%d/close", admins[2]), "")
	admins = admins[:2]
	ids := func(path string) []int64 {
		us, _ := listAll(t, a, path, 1)
		var out []int64
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	if diff := cmp.Diff(append([]int64{adminID}, admins...), ids("/users?role=admin")); diff != "" {
		t.Errorf("?role=admin (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(customers, ids("/users?role=customer")); diff != "" {
		t.Errorf("?role=customer (-want +got):\n%s", diff)
	}
	for _, q := range []string{"/users?role=root", "/users?role=", "/admin/users?role=admin"} {
		servicetest.WantProblem(t, a.Do(t, "GET", q, ""), 400, quire.EINVALID)
	}
	c := api.As(t, quire.ID(customers[0]), quire.RoleCustomer)
	if r := c.Do(t, "GET", "/users?role=customer", ""); len(servicetest.Decode[[]user](t, r)) != 1 {
		t.Errorf("a customer's ?role=customer = %s, want themselves", r.Body)
	}
	if r := c.Do(t, "GET", "/users?role=admin", ""); r.StatusCode != 200 || r.Body != "[]" {
		t.Errorf("a customer's ?role=admin = %d %s, want []", r.StatusCode, r.Body)
	}
}

// userV2 is a user as v2 shows it.
type userV2 struct {
	ID        int64             `json:"id"`
	Email     string            `json:"email"`
	Name      string            `json:"name"`
	FirstName *string           `json:"first_name"`
	LastName  *string           `json:"last_name"`
	Links     map[string]string `json:"_links"`
}

func TestUserVersions(t *testing.T) {
	api := servicetest.New(t)
	u := signUp(t, api, "ada@example.com")
	c := as(t, api, u)
	id := fmt.Sprint(u.ID)

	for _, get := range []struct{ path, accept, contentType string }{
		{"/api/v2/users/" + id, "", "application/json"},
		{"/users/" + id, "application/vnd.quire.v2+json", "application/vnd.quire.v2+json"},
	} {
		var header []string
		if get.accept != "" {
			header = []string{"Accept", get.accept}
		}
		r := c.Do(t, "GET", get.path, "", header...)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != get.contentType || r.Header.Get("Vary") != "Accept" {
			t.Fatalf("GET %s Accept %q = %d %s Vary %q", get.path, get.accept, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Vary"))
		}
		v2 := servicetest.Decode[userV2](t, r)
		if v2.Name != "Ada Lovelace" || v2.FirstName != nil || v2.LastName != nil {
			t.Errorf("v2 user %s", r.Body)
		}
	}

	// A v2 name is a v1 first name and last name.
	r := c.Do(t, "PUT", "/api/v2/users/"+id, `{"email":"ada@example.com","name":"Augusta Ada King"}`)
	if r.StatusCode != 200 || servicetest.Decode[userV2](t, r).Name != "Augusta Ada King" {
		t.Fatalf("PUT v2: %d %s", r.StatusCode, r.Body)
	}
	v1 := getAccount(t, c, "/users/"+id)
	if v1.FirstName != "Augusta" || v1.LastName != "Ada King" {
		t.Errorf("v1 after a v2 PUT: %q %q", v1.FirstName, v1.LastName)
	}
	servicetest.WantProblem(t, c.Do(t, "PUT", "/api/v2/users/"+id, `{"email":"ada@example.com","first_name":"A","last_name":"B"}`), 400, quire.EINVALID)
	servicetest.WantProblem(t, c.Do(t, "PUT", "/api/v1/users/"+id, `{"email":"ada@example.com","name":"A B"}`), 400, quire.EINVALID)
	servicetest.WantProblem(t, c.Do(t, "GET", "/users/"+id, "", "Accept", "application/vnd.quire.v3+json"), 406, quire.ENOTACCEPTABLE)

	// Sign-up in v2.
	r = api.Do(t, "POST", "/api/v2/users", `{"email":"grace@example.com","name":"Grace","password":"correct horse"}`)
	if r.StatusCode != 201 || !strings.Contains(r.Header.Get("Location"), "/api/v2/users/") {
		t.Fatalf("POST /api/v2/users = %d %s Location %q", r.StatusCode, r.Body, r.Header.Get("Location"))
	}
	g := servicetest.Decode[userV2](t, r)
	if g.Name != "Grace" || g.Links == nil || len(g.Links) != 0 {
		t.Errorf("v2 sign-up: %s; want the name and no links for an anonymous caller", r.Body)
	}
	if got := servicetest.Decode[userV2](t, admin(t, api).Do(t, "GET", fmt.Sprintf("/api/v2/users/%d", g.ID), "")); got.Links["deposit"] != fmt.Sprintf("/api/v2/users/%d/deposit", g.ID) {
		t.Errorf("v2 user as an admin reads it: _links %v, want a deposit link under /api/v2", got.Links)
	}
}
