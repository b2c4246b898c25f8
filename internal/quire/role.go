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
