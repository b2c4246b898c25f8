package users_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/shared/dynamo/dynamotest"
	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/service/servicetest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

type user struct {
	ID        int64  `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Role      string `json:"role"`
	Status    string `json:"status"`
	Balance   json.Number
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func decode[T any](t *testing.T, r servicetest.Response) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: body %q: %v", r.Request.URL, r.Body, err)
	}
	return v
}

// wantProblem checks that r is a problem+json response with the status and
// the problem type of code.
func wantProblem(t *testing.T, r servicetest.Response, status int, code string) rest.Problem {
	t.Helper()
	if r.StatusCode != status || r.Header.Get("Content-Type") != rest.ProblemMediaType {
		t.Fatalf("%s %s = %d %s %s; want %d problem+json", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Header.Get("Content-Type"), r.Body, status)
	}
	p := decode[rest.Problem](t, r)
	if p.Type != rest.ProblemType(code) || p.Status != status || p.RequestID == "" {
		t.Errorf("problem = %+v; want type %s, status %d and a request id", p, rest.ProblemType(code), status)
	}
	return p
}

func create(t *testing.T, api *servicetest.API, email string) user {
	t.Helper()
	r := api.Do(t, "POST", "/users", fmt.Sprintf(`{"email":%q,"first_name":"Ada","last_name":"Lovelace"}`, email))
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("POST /users = %d %s", r.StatusCode, r.Body)
	}
	return decode[user](t, r)
}

// listAll follows next links from GET /users?limit and returns every user.
func listAll(t *testing.T, api *servicetest.API, limit int) (all []user, pages int) {
	t.Helper()
	next := fmt.Sprintf("%s/users?limit=%d", api.URL, limit)
	link := regexp.MustCompile(`^<([^>]+)>; rel="next"$`)
	for next != "" {
		r := api.Do(t, "GET", strings.TrimPrefix(next, api.URL), "")
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s = %d %s", next, r.StatusCode, r.Body)
		}
		page := decode[[]user](t, r)
		if len(page) > limit {
			t.Fatalf("page of %d users for limit %d", len(page), limit)
		}
		all, pages, next = append(all, page...), pages+1, ""
		if l := r.Header.Get("Link"); l != "" {
			m := link.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("Link %q", l)
			}
			next = m[1]
		}
	}
	return all, pages
}

func TestCreateAndGet(t *testing.T) {
	api := servicetest.New(t)
	r := api.Do(t, "POST", "/users", `{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","balance":1000,"id":7}`)
	if r.StatusCode != 201 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST /users = %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.Body)
	}
	u := decode[user](t, r)
	if u.ID <= 0 || u.ID == 7 || u.Email != "ada@example.com" || u.Role != "customer" || u.Status != "ACTIVE" || u.CreatedAt == "" {
		t.Errorf("created %+v", u)
	}
	if !strings.Contains(r.Body, `"balance":0.00`) {
		t.Errorf("balance is not an exact 0.00 (a client cannot set it): %s", r.Body)
	}
	if want := fmt.Sprintf("%s/users/%d", api.URL, u.ID); r.Header.Get("Location") != want {
		t.Errorf("Location = %q, want %q", r.Header.Get("Location"), want)
	}
	got := api.Do(t, "GET", fmt.Sprintf("/users/%d", u.ID), "")
	if got.StatusCode != 200 || got.Body != r.Body {
		t.Errorf("GET = %d %s\nwant the created body %s", got.StatusCode, got.Body, r.Body)
	}
}

func TestDuplicateEmail(t *testing.T) {
	api := servicetest.New(t)
	create(t, api, "ada@example.com")
	r := api.Do(t, "POST", "/users", `{"email":"ADA@example.com","first_name":"Other","last_name":"One"}`)
	wantProblem(t, r, 409, "conflict")
	if all, _ := listAll(t, api, 10); len(all) != 1 {
		t.Errorf("%d users stored, want 1", len(all))
	}
}

// TestConcurrentSignUps sends one email many times at once: exactly one
// request creates a user.
func TestConcurrentSignUps(t *testing.T) {
	api := servicetest.New(t)
	const n = 10
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			statuses <- api.Do(t, "POST", "/users", `{"email":"race@example.com","first_name":"R","last_name":"C"}`).StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if diff := cmp.Diff(map[int]int{201: 1, 409: n - 1}, count); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if all, _ := listAll(t, api, 10); len(all) != 1 {
		t.Errorf("%d users stored, want 1", len(all))
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	api := servicetest.New(t)
	u := create(t, api, "ada@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)
	before := api.Do(t, "GET", path, "").Body
	for _, tc := range []struct {
		method, path, body, contentType string
		status                          int
		code                            string
	}{
		{"POST", "/users", `{"email":"x@example.com","first_name":"X","last_name":"Y"}`, "text/plain", 415, "media-type"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"X","last_name":"Y"`, "application/json", 400, "invalid"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"X","last_name":"Y","nickname":"Z"}`, "application/json", 400, "invalid"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"` + strings.Repeat("x", 70000) + `","last_name":"Y"}`, "application/json", 413, "too-large"},
		{"POST", "/users", `{"email":"x@example.com","first_name":"X","last_name":"Y","role":"root"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"not-an-email","first_name":"","last_name":"Y","role":"admin","status":"ACTIVE"}`, "application/json", 400, "invalid"},
		{"PUT", path, `{"email":"x@example.com"}`, "application/json", 400, "invalid"},
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
			r := api.Do(t, tc.method, tc.path, tc.body, "Content-Type", tc.contentType)
			wantProblem(t, r, tc.status, tc.code)
		})
	}
	if after := api.Do(t, "GET", path, "").Body; after != before {
		t.Errorf("user changed:\n%s\n%s", before, after)
	}
	if all, _ := listAll(t, api, 10); len(all) != 1 {
		t.Errorf("%d users stored, want 1", len(all))
	}
}

func TestReplaceListsEachInvalidField(t *testing.T) {
	api := servicetest.New(t)
	u := create(t, api, "ada@example.com")
	r := api.Do(t, "PUT", fmt.Sprintf("/users/%d", u.ID), `{"email":"nope","first_name":" ","last_name":"L","role":"king","status":"ACTIVE"}`)
	p := wantProblem(t, r, 400, "invalid")
	var pointers []string
	for _, e := range p.Errors {
		pointers = append(pointers, e.Pointer)
	}
	if diff := cmp.Diff([]string{"/email", "/first_name", "/role"}, pointers); diff != "" {
		t.Errorf("invalid fields (-want +got):\n%s", diff)
	}
}

func TestReplace(t *testing.T) {
	api := servicetest.New(t)
	u := create(t, api, "ada@example.com")
	other := create(t, api, "grace@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)

	r := api.Do(t, "PUT", path, `{"email":"countess@example.com","first_name":"Augusta","last_name":"King","role":"admin","status":"CLOSED","balance":99}`)
	if r.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", r.StatusCode, r.Body)
	}
	got := decode[user](t, r)
	want := u
	want.Email, want.FirstName, want.LastName, want.Role, want.Status = "countess@example.com", "Augusta", "King", "admin", "CLOSED"
	want.UpdatedAt = got.UpdatedAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PUT body (-want +got):\n%s", diff)
	}
	if stored := api.Do(t, "GET", path, ""); stored.Body != r.Body {
		t.Errorf("GET after PUT = %s\nwant %s", stored.Body, r.Body)
	}
	// The old email is free again; the new one is taken.
	create(t, api, "ada@example.com")
	wantProblem(t, api.Do(t, "POST", "/users", `{"email":"Countess@example.com","first_name":"A","last_name":"B"}`), 409, "conflict")
	// Taking another user's email is a conflict and changes nothing.
	wantProblem(t, api.Do(t, "PUT", path, `{"email":"grace@example.com","first_name":"A","last_name":"B","role":"admin","status":"ACTIVE"}`), 409, "conflict")
	if stored := api.Do(t, "GET", path, ""); stored.Body != r.Body {
		t.Errorf("a failed PUT changed the user: %s", stored.Body)
	}
	// Same email in another case: allowed, stored as sent.
	r = api.Do(t, "PUT", fmt.Sprintf("/users/%d", other.ID), `{"email":"Grace@Example.com","first_name":"Grace","last_name":"Hopper","role":"customer","status":"ACTIVE"}`)
	if r.StatusCode != 200 || decode[user](t, r).Email != "Grace@Example.com" {
		t.Errorf("PUT with the email in another case = %d %s", r.StatusCode, r.Body)
	}
}

func TestDelete(t *testing.T) {
	api := servicetest.New(t)
	u := create(t, api, "ada@example.com")
	keep := create(t, api, "grace@example.com")
	path := fmt.Sprintf("/users/%d", u.ID)
	r := api.Do(t, "DELETE", path, "")
	if r.StatusCode != 204 || r.Body != "" {
		t.Fatalf("DELETE = %d %q", r.StatusCode, r.Body)
	}
	wantProblem(t, api.Do(t, "DELETE", path, ""), 404, "not-found")
	wantProblem(t, api.Do(t, "GET", path, ""), 404, "not-found")
	all, _ := listAll(t, api, 10)
	if len(all) != 1 || all[0].ID != keep.ID {
		t.Errorf("users after delete: %+v", all)
	}
	create(t, api, "ada@example.com") // the email is free again
}

func TestListPages(t *testing.T) {
	api := servicetest.New(t)
	var want []int64
	for i := range 7 {
		want = append(want, create(t, api, fmt.Sprintf("u%d@example.com", i)).ID)
	}
	for _, tc := range []struct{ limit, pages int }{{2, 4}, {7, 1}, {3, 3}, {100, 1}} {
		all, pages := listAll(t, api, tc.limit)
		var ids []int64
		for _, u := range all {
			ids = append(ids, u.ID)
		}
		if diff := cmp.Diff(want, ids); diff != "" || pages != tc.pages {
			t.Errorf("limit %d: %d pages, want %d; ids (-want +got):\n%s", tc.limit, pages, tc.pages, diff)
		}
	}
	if r := api.Do(t, "GET", "/users", ""); len(decode[[]user](t, r)) != 7 || r.Header.Get("Link") != "" {
		t.Errorf("default page: %s, Link %q", r.Body, r.Header.Get("Link"))
	}
}

func TestEmptyListIsAnArray(t *testing.T) {
	api := servicetest.New(t)
	if r := api.Do(t, "GET", "/users", ""); r.StatusCode != 200 || r.Body != "[]" {
		t.Errorf("GET /users = %d %q", r.StatusCode, r.Body)
	}
}
