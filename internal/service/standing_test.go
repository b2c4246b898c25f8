package service_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
	"github.com/quireapi/quire/internal/users"
)

// An admin cannot change its own role (400 naming the field), and a
// closed admin cannot reopen its own account, even with its current
// password: it acts as the customer it is now, whose role and status a
// write leaves as stored. Another admin reopens it.
func TestNoOneChangesTheirOwnStanding(t *testing.T) {
	api := servicetest.New(t, servicetest.Option{Demo: true})
	ada := api.As(t, 1, quire.RoleAdmin)
	other := api.As(t, 9, quire.RoleAdmin)
	write := func(role, status string) string {
		return fmt.Sprintf(`{"email":%q,"first_name":"Ada","last_name":"Admin","role":%q,"status":%q,"current_password":%q}`,
			demo.AdminEmail, role, status, demo.AdminPassword)
	}
	status := func() string {
		var u struct{ Role, Status string }
		if err := json.Unmarshal([]byte(other.Expect(t, "GET", "/users/1", "", http.StatusOK).Body), &u); err != nil {
			t.Fatal(err)
		}
		return u.Role + " " + u.Status
	}
	refused := func(body, field string) {
		t.Helper()
		p := ada.ExpectProblem(t, "PUT", "/users/1", body, http.StatusBadRequest, quire.EINVALID)
		if len(p.Errors) != 1 || p.Errors[0] != (quire.FieldError{Pointer: field, Detail: users.NotOwnToChange}) {
			t.Errorf("errors %+v, want %s %q", p.Errors, field, users.NotOwnToChange)
		}
	}
	refused(write("customer", "ACTIVE"), "/role")
	ada.Expect(t, "POST", "/users/1/close", "", http.StatusOK)
	ada.Expect(t, "PUT", "/users/1", write("admin", "ACTIVE"), http.StatusOK)
	if got := status(); got != "admin CLOSED" {
		t.Errorf("after its own reopening: %s, want admin CLOSED", got)
	}
	other.Expect(t, "PUT", "/users/1", write("admin", "ACTIVE"), http.StatusOK)
	if got := status(); got != "admin ACTIVE" {
		t.Errorf("after another admin reopened it: %s, want admin ACTIVE", got)
	}
}
