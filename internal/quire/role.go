package quire

// Role is what a user may do: customers shop, admins also run the shop.
type Role string

// The roles.
const (
	RoleCustomer Role = "customer"
	RoleAdmin    Role = "admin"
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleCustomer || r == RoleAdmin }

// ActingAs is the role an account with role r acts with, and a login or a
// refresh of it gets in its token: r while the account is active, a
// customer's once it is closed. So a closed admin is no admin, whatever
// token it holds.
func (r Role) ActingAs(closed bool) Role {
	if closed {
		return RoleCustomer
	}
	return r
}
