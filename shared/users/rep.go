package users

import (
	"net/http"
	"time"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
)

// Links are the actions that the caller may take now on a user's account,
// as paths: while it is active, deposit for an admin (money comes from the
// back office, never from the account's owner) and close_account for its
// owner or an admin; neither once it is closed, nor for a caller who would
// be refused.
type Links struct {
	Deposit      string `json:"deposit,omitempty"`
	CloseAccount string `json:"close_account,omitempty"`
}

// V1 is a user in API v1.
type V1 struct {
	ID        quire.ID    `json:"id"`
	Email     string      `json:"email"`
	FirstName string      `json:"first_name"`
	LastName  string      `json:"last_name"`
	Role      quire.Role  `json:"role"`
	Status    Status      `json:"status"`
	Balance   quire.Money `json:"balance"`
	Profile   *Profile    `json:"profile,omitempty"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Links     Links       `json:"_links"`
}

// V2 is a user in API v2: one name instead of first and last names.
type V2 struct {
	ID        quire.ID    `json:"id"`
	Email     string      `json:"email"`
	Name      string      `json:"name"`
	Role      quire.Role  `json:"role"`
	Status    Status      `json:"status"`
	Balance   quire.Money `json:"balance"`
	Profile   *Profile    `json:"profile,omitempty"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Links     Links       `json:"_links"`
}

// represent returns u as the version r asked for, with its profile when
// embed is true.
func represent(r *http.Request, u *User, embed bool) any {
	var links Links
	if caller := rest.CallerOf(r); u.Status == StatusActive {
		base := "/users/" + u.ID.String()
		if caller.Admin() {
			links.Deposit = rest.Path(r, base+"/deposit")
		}
		if caller.Owns(u.ID) {
			links.CloseAccount = rest.Path(r, base+"/close")
		}
	}
	var profile *Profile
	if embed {
		profile = &u.Profile
	}
	if rest.Version(r) >= 2 {
		return V2{u.ID, u.Email, u.Name(), u.Role, u.Status, u.Balance, profile, u.CreatedAt, u.UpdatedAt, links}
	}
	return V1{u.ID, u.Email, u.FirstName, u.LastName, u.Role, u.Status, u.Balance, profile, u.CreatedAt, u.UpdatedAt, links}
}

func representAll(r *http.Request, us []User, embed bool) []any {
	out := make([]any, len(us))
	for i := range us {
		out[i] = represent(r, &us[i], embed)
	}
	return out
}
