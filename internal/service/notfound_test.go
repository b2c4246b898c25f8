package service_test

import (
	"net/http"
	"testing"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// What is not stored is told in each resource's own words, whichever store
// found it missing.
func TestNotFoundWords(t *testing.T) {
	api := servicetest.New(t)
	admin := api.As(t, 1, quire.RoleAdmin)
	for path, detail := range map[string]string{
		"/users/999":          "No user has the id 999.",
		"/users/999/profile":  "No user has the id 999.",
		"/products/999":       "No product has the id 999.",
		"/authors/999":        "No author has the id 999.",
		"/authors/999/books":  "No author has the id 999.",
		"/orders/999":         "No order has the id 999.",
		"/config":             "No configuration document is stored yet; an admin stores one with PUT /admin/config.",
		"/api/v2/orders/999":  "No order has the id 999.",
		"/api/v1/products/99": "No product has the id 99.",
	} {
		p := servicetest.WantProblem(t, admin.Do(t, "GET", path, ""), http.StatusNotFound, quire.ENOTFOUND)
		if p.Detail != detail {
			t.Errorf("GET %s: %q, want %q", path, p.Detail, detail)
		}
	}
	for path, detail := range map[string]string{
		"/users/999/deposit": "No user has the id 999.",
		"/users/999/close":   "No user has the id 999.",
	} {
		body := ""
		if path == "/users/999/deposit" {
			body = `{"amount": 1.00}`
		}
		p := servicetest.WantProblem(t, admin.Do(t, "POST", path, body), http.StatusNotFound, quire.ENOTFOUND)
		if p.Detail != detail {
			t.Errorf("POST %s: %q, want %q", path, p.Detail, detail)
		}
	}
	p := servicetest.WantProblem(t, admin.Do(t, "PUT", "/admin/products/999", `{"name":"X","price":1,"status":"AVAILABLE","author_id":1}`),
		http.StatusNotFound, quire.ENOTFOUND)
	if p.Detail != "No product has the id 999." {
		t.Errorf("PUT /admin/products/999: %q", p.Detail)
	}
}
