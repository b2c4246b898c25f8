package service_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

// A function whose role lacks a grant its code needs (the users function
// lacked BatchGetItem on the users table, which the admin's user pages
// send) meets AccessDeniedException, on DynamoDB Local as deployed
// (dynamo.Enforce) and in memory (memstore.DB.As). That is a deployment
// defect, never the client's: the client is answered 500 internal, without
// Retry-After, and the request line is an error naming the exception, the
// action and the table. With the grant, the same request answers.
func TestAMissingGrantIs500(t *testing.T) {
	servicetest.On(t, func(t *testing.T, on servicetest.Option) {
		on.Demo = true
		restore := routes.Revoke(routes.GroupUsers, routes.TableUsers, "dynamodb:BatchGetItem")
		api := servicetest.New(t, on)
		restore()
		r := api.As(t, 1, quire.RoleAdmin).Do(t, "GET", "/admin/users", "")
		servicetest.WantProblem(t, r, http.StatusInternalServerError, quire.EINTERNAL)
		if r.Header.Get("Retry-After") != "" {
			t.Errorf("Retry-After %q: no retry fixes a missing grant", r.Header.Get("Retry-After"))
		}
		line := servicetest.Line(t, r.Header.Get("X-Amzn-Requestid"))
		msg, _ := line["error"].(string)
		for _, want := range []string{"AccessDeniedException", "dynamodb:BatchGetItem", "table/" + api.Tables.Physical(routes.TableUsers)} {
			if line["level"] != "ERROR" || !strings.Contains(msg, want) {
				t.Errorf("request line %v, want an error naming %s", line, want)
			}
		}

		granted := servicetest.New(t, on)
		granted.As(t, 1, quire.RoleAdmin).Expect(t, "GET", "/admin/users", "", http.StatusOK)
	})
}
