// Package users is Quire's accounts: the User, the rules its fields follow,
// the Store it is kept in, and the HTTP handlers of the users resource.
package users

import (
	"context"
	"encoding/json"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/quireapi/quire/shared/password"
	"github.com/quireapi/quire/shared/quire"
)

// Status is the state of a user's account.
type Status string

// The account states. A closed account keeps its history.
const (
	StatusActive Status = "ACTIVE"
	StatusClosed Status = "CLOSED"
)

// User is an account of the bookshop, with its prepaid balance.
type User struct {
	ID        quire.ID    `json:"id"`
	Email     string      `json:"email"`
	FirstName string      `json:"first_name"`
	LastName  string      `json:"last_name"`
	Role      quire.Role  `json:"role"`
	Status    Status      `json:"status"`
	Balance   quire.Money `json:"balance"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// Fields are the writable fields of a user as a request body carries them.
// The read-only fields (id, balance, created_at, updated_at) are accepted and
// ignored, so that a client may PUT back what it got from a GET; so are role
// and status, except from an admin. The password is write-only.
type Fields struct {
	Email     *string     `json:"email"`
	FirstName *string     `json:"first_name"`
	LastName  *string     `json:"last_name"`
	Role      *quire.Role `json:"role"`
	Status    *Status     `json:"status"`
	Password  *string     `json:"password"`

	ID        json.RawMessage `json:"id"`
	Balance   json.RawMessage `json:"balance"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
}

// Limits on field values.
const (
	MaxEmailLen = 254 // RFC 5321's limit on a forward path
	MaxNameLen  = 100 // characters
)

// ListQuery selects a page of users.
type ListQuery struct {
	After     quire.ID // 0 for the first page
	Limit     int
	AnyStatus bool // closed accounts too
}

// Store keeps users. Its methods return *quire.Error with ENOTFOUND for a
// missing user and ECONFLICT for an email another user has.
type Store interface {
	// Create stores u under u.ID, or under a new id it sets when u.ID is 0,
	// with a zero balance, the times and the password hash.
	Create(ctx context.Context, u *User, passwordHash string) error
	Get(ctx context.Context, id quire.ID) (*User, error)
	// List returns up to q.Limit users ordered by id, after q.After, and
	// the id the next page starts after, or 0.
	List(ctx context.Context, q ListQuery) (us []User, next quire.ID, err error)
	// Replace stores the writable fields of u over the user u.ID, keeping
	// the stored role and status where u's are zero and the stored
	// password where passwordHash is "", and returns the user as stored.
	Replace(ctx context.Context, u *User, passwordHash string) (*User, error)
	Delete(ctx context.Context, id quire.ID) error
}

// newUser validates f for a sign-up: email, first and last name and
// password are required; the role is customer and the status ACTIVE,
// whatever f says.
func newUser(f Fields) (*User, error) {
	if f.Password == nil {
		f.Password = new(string) // reported as too short, with the others
	}
	u, err := f.user(false)
	if err != nil {
		return nil, err
	}
	u.Role, u.Status = quire.RoleCustomer, StatusActive
	return u, nil
}

// user validates f as a complete set of the fields its writer may set: the
// email and names, plus role and status when admin is true (otherwise they
// are ignored and u's are zero), and the password when present. Each
// invalid field is listed in the error.
func (f Fields) user(admin bool) (*User, error) {
	var errs []quire.FieldError
	bad := func(field, detail string) {
		errs = append(errs, quire.FieldError{Pointer: "/" + field, Detail: detail})
	}
	u := &User{}
	switch {
	case f.Email == nil:
		bad("email", "is required")
	default:
		if email, err := normalizeEmail(*f.Email); err != nil {
			bad("email", err.Error())
		} else {
			u.Email = email
		}
	}
	for _, n := range []struct {
		field string
		in    *string
		out   *string
	}{{"first_name", f.FirstName, &u.FirstName}, {"last_name", f.LastName, &u.LastName}} {
		if n.in == nil {
			bad(n.field, "is required")
			continue
		}
		if err := checkName(*n.in); err != "" {
			bad(n.field, err)
			continue
		}
		*n.out = strings.TrimSpace(*n.in)
	}
	if f.Password != nil {
		if err := password.Check(*f.Password); err != "" {
			bad("password", err)
		}
	}
	switch {
	case !admin:
	case f.Role == nil:
		bad("role", "is required")
	case !f.Role.Valid():
		bad("role", `must be "customer" or "admin"`)
	default:
		u.Role = *f.Role
	}
	switch {
	case !admin:
	case f.Status == nil:
		bad("status", "is required")
	case *f.Status != StatusActive && *f.Status != StatusClosed:
		bad("status", `must be "ACTIVE" or "CLOSED"`)
	default:
		u.Status = *f.Status
	}
	if errs != nil {
		return nil, quire.Invalid(errs...)
	}
	return u, nil
}

type fieldErr string

func (e fieldErr) Error() string { return string(e) }

// normalizeEmail checks that s is one bare address (no display name, no
// angle brackets) of at most MaxEmailLen bytes, and trims it.
func normalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fieldErr("must not be empty")
	}
	if len(s) > MaxEmailLen {
		return "", fieldErr("must be at most 254 bytes")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", fieldErr("must be an email address such as ada@example.com")
	}
	return s, nil
}

// checkName returns why s is not a valid name, or "".
func checkName(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "must not be empty"
	case !utf8.ValidString(s):
		return "must be UTF-8"
	case utf8.RuneCountInString(s) > MaxNameLen:
		return "must be at most 100 characters"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "must not contain control characters"
	}
	return ""
}

// EmailKey is the form of an email that uniqueness is checked on: emails
// differing only in case belong to one user.
func EmailKey(email string) string { return strings.ToLower(email) }
