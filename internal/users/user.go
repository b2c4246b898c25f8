// Package users is Quire's accounts: the User, the rules its fields follow,
// the Store it is kept in, and the HTTP handlers of the users resource.
package users

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
)

// Status is the state of a user's account.
type Status string

// The account states. A closed account keeps its history.
const (
	StatusActive Status = "ACTIVE"
	StatusClosed Status = "CLOSED"
)

// User is an account of the bookshop, with its prepaid balance and its
// profile. Its representations, one per API version, are in rep.go.
type User struct {
	ID        quire.ID
	Email     string
	FirstName string
	LastName  string
	Role      quire.Role
	Status    Status
	Balance   quire.Money
	Profile   Profile
	CreatedAt time.Time
	UpdatedAt time.Time
	// Hash is the content hash of all of the above, stored with the user
	// and changed by every write: the ETag of the user and its profile.
	Hash string `json:"-"`
}

// Name is the user's full name, as API v2 shows it.
func (u *User) Name() string { return strings.TrimSpace(u.FirstName + " " + u.LastName) }

// Profile is what a user tells about themselves. PUT replaces it whole: an
// absent field is empty.
type Profile struct {
	Bio        string `json:"bio"`
	Location   string `json:"location"`
	Website    string `json:"website"`
	Newsletter bool   `json:"newsletter"`
}

// Limits on profile fields, in characters.
const (
	MaxBioLen      = 500
	MaxLocationLen = 100
	MaxWebsiteLen  = 200
)

// Check returns the profile with its strings trimmed, or each invalid
// field: text on one line (see quire.CheckText), but the bio, which may
// have several.
func (p Profile) Check() (Profile, error) {
	var errs []quire.FieldError
	for _, f := range []struct {
		field string
		v     *string
		max   int
	}{{"bio", &p.Bio, MaxBioLen}, {"location", &p.Location, MaxLocationLen}, {"website", &p.Website, MaxWebsiteLen}} {
		*f.v = strings.TrimSpace(*f.v)
		if detail := quire.CheckText(*f.v, f.max, f.field == "bio"); detail != "" {
			errs = append(errs, quire.FieldError{Pointer: "/" + f.field, Detail: detail})
		}
	}
	if p.Website != "" {
		if u, err := url.Parse(p.Website); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, quire.FieldError{Pointer: "/website", Detail: "must be an http or https URL"})
		}
	}
	if errs != nil {
		return Profile{}, quire.Invalid(errs...)
	}
	return p, nil
}

// Deposits: each is at least MinDeposit and at most MaxDeposit, and a
// balance never exceeds MaxBalance.
const (
	MinDeposit quire.Money = 1
	MaxDeposit quire.Money = 10_000_00
	MaxBalance quire.Money = 1_000_000_00
)

// Deposit is the body of POST /users/{id}/deposit.
type Deposit struct {
	Amount *quire.Money `json:"amount"`
}

// Valid returns the amount of d, or why it is not a valid deposit.
func (d Deposit) Valid() (quire.Money, error) {
	switch {
	case d.Amount == nil:
		return 0, quire.Invalid(quire.FieldError{Pointer: "/amount", Detail: "is required"})
	case *d.Amount < MinDeposit || *d.Amount > MaxDeposit:
		return 0, quire.Invalid(quire.FieldError{Pointer: "/amount",
			Detail: fmt.Sprintf("must be from %s to %s", MinDeposit, MaxDeposit)})
	}
	return *d.Amount, nil
}

// Fields are the writable fields of a user as a request body carries them:
// first_name and last_name in API v1, name in v2. The read-only fields (id,
// balance, created_at, updated_at, profile, _links) are accepted and
// ignored, so that a client may PUT back what it got from a GET; so are role
// and status, except from an admin. The password and the current password
// are write-only.
type Fields struct {
	Email     *string     `json:"email"`
	FirstName *string     `json:"first_name"`
	LastName  *string     `json:"last_name"`
	Name      *string     `json:"name"`
	Role      *quire.Role `json:"role"`
	Status    *Status     `json:"status"`
	Password  *string     `json:"password"`
	// CurrentPassword proves a change of one's own email or password.
	CurrentPassword *string `json:"current_password"`

	ID        json.RawMessage `json:"id"`
	Balance   json.RawMessage `json:"balance"`
	Profile   json.RawMessage `json:"profile"`
	Links     json.RawMessage `json:"_links"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
}

// Limits on field values.
const (
	MaxEmailLen = quire.MaxEmailLen // bytes
	MaxNameLen  = 100               // characters
)

// ListQuery selects a page of users.
type ListQuery struct {
	After     quire.ID // 0 for the first page
	Limit     int
	AnyStatus bool       // closed accounts too
	Role      quire.Role // only active users with this role, when set
}

// Credentials are what proves a user's identity, as stored, for a change
// of their own email or password: their email, whose failed logins a wrong
// current password counts one more of, and the password hash.
type Credentials struct {
	Email        string
	PasswordHash string
}

// Store keeps users. Its methods return *quire.Error with ENOTFOUND for a
// missing user. A commit that finds what it read changed writes nothing
// and returns a *quire.Stale naming it, as each method says (StaleUser,
// StaleEmail...), for the caller to read and decide again; one that other
// requests' transactions kept from committing returns ECONFLICT.
type Store interface {
	// CommitCreate stores the new user u (see Signed) with passwordHash,
	// and reserves its email, with rec, the answer to the request's
	// idempotency key when it has one. With nothing written, it returns a
	// *quire.Stale naming StaleUser when u's id is taken, StaleEmail when
	// its email is, and idempotency.ErrRaced when another request with
	// rec's key committed first.
	CommitCreate(ctx context.Context, ch Change, passwordHash string, rec *idempotency.Record) error
	Get(ctx context.Context, id quire.ID) (*User, error)
	// Reserve counts a guess of an email's current password (see
	// login.Guesses).
	login.Guesses
	// List returns up to q.Limit users ordered by id, after q.After, and
	// the id the next page starts after, or 0.
	List(ctx context.Context, q ListQuery) (us []User, next quire.ID, err error)
	// Stored reads the user id with what its email's reservation carries
	// (see Stored), consistently: ENOTFOUND when there is none.
	Stored(ctx context.Context, id quire.ID) (Stored, error)
	// CommitRevision writes rev (see Revise). With nothing written, it
	// returns a *quire.Stale naming StaleUser when the user is not as
	// read, StaleEmail when another user has the new email, and
	// StaleReservation when the old email's reservation is gone.
	CommitRevision(ctx context.Context, rev Revision) error
	// CommitProfile writes ch, a new profile: a *quire.Stale naming
	// StaleUser, with nothing written, when the user is not as read.
	CommitProfile(ctx context.Context, ch Change, rec *idempotency.Record) error
	// CommitDeposit writes ch, a deposit (see Credit), with rec, the answer
	// to the request's idempotency key when it has one. With nothing
	// written, it returns a *quire.Stale naming StaleUser when the user is
	// not as read, and idempotency.ErrRaced when another request with
	// rec's key committed first.
	CommitDeposit(ctx context.Context, ch Change, rec *idempotency.Record) error
	// CommitClose writes ch, a closing (see CloseAccount), with rec, as
	// CommitDeposit does, and in the same transaction ends the account's
	// sessions and its email's logins.
	CommitClose(ctx context.Context, ch Change, rec *idempotency.Record) error
	// Sessions lists the ids of the sessions of the user id, as many as
	// a deletion ends at once, and whether there are more.
	Sessions(ctx context.Context, id quire.ID) (ids []string, more bool, err error)
	// CommitDelete removes what d names (see Deletion): a *quire.Stale
	// naming StaleUser, with nothing removed, when the user is not as read.
	CommitDelete(ctx context.Context, d Deletion) error
}

// SignUp validates f for a sign-up in API version v: email, names and
// password are required; the role is customer and the status ACTIVE,
// whatever f says.
func (f Fields) SignUp(v int) (*User, error) {
	if f.Password == nil {
		f.Password = new(string) // reported as too short, with the others
	}
	u, err := f.User(v, false)
	if err != nil {
		return nil, err
	}
	u.Role, u.Status = quire.RoleCustomer, StatusActive
	return u, nil
}

// User validates f as a complete set of the fields its writer may set in
// API version v: the email and names, plus role and status when admin is
// true (otherwise they are ignored and u's are zero), and the password
// when present; a current password, when present, is no longer than a
// password (password.CheckGuess). Each invalid field is listed in the
// error.
//
// v2's name is stored as a first name (up to the first space) and a last
// name (the rest, possibly empty), which is how v1 shows it.
func (f Fields) User(v int, admin bool) (*User, error) {
	var errs []quire.FieldError
	bad := func(field, detail string) {
		errs = append(errs, quire.FieldError{Pointer: "/" + field, Detail: detail})
	}
	u := &User{}
	if f.Email == nil {
		bad("email", "is required")
	} else if email, err := normalizeEmail(*f.Email); err != nil {
		bad("email", err.Error())
	} else {
		u.Email = email
	}
	names := []struct {
		field string
		in    *string
		out   *string
	}{{"first_name", f.FirstName, &u.FirstName}, {"last_name", f.LastName, &u.LastName}}
	if v >= 2 {
		for _, n := range names {
			if n.in != nil {
				bad(n.field, "is not a field of a user in API v2; send name")
			}
		}
		names = names[:0]
		switch {
		case f.Name == nil:
			bad("name", "is required")
		case checkName(*f.Name) != "":
			bad("name", checkName(*f.Name))
		default:
			first, last, _ := strings.Cut(strings.TrimSpace(*f.Name), " ")
			u.FirstName, u.LastName = first, strings.TrimSpace(last)
		}
	} else if f.Name != nil {
		bad("name", "is not a field of a user in API v1; send first_name and last_name")
	}
	for _, n := range names {
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
	if f.CurrentPassword != nil {
		if err := password.CheckGuess(*f.CurrentPassword); err != "" {
			bad("current_password", err)
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
// angle brackets) of at most MaxEmailLen bytes, of text (see
// quire.CheckText), and trims it.
func normalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fieldErr("must not be empty")
	}
	if len(s) > MaxEmailLen {
		return "", fieldErr(fmt.Sprintf("must be at most %d bytes", MaxEmailLen))
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", fieldErr("must be an email address such as ada@example.com")
	}
	if detail := quire.CheckText(s, MaxEmailLen, false); detail != "" {
		return "", fieldErr(detail)
	}
	return s, nil
}

// checkName returns why s is not a valid name, or "".
func checkName(s string) string { return quire.CheckName(s, MaxNameLen) }

// LoginRole is the role a login or a refresh of an account with role and
// status gets in its token: the role the account acts with
// (quire.Role.ActingAs), a customer's once it is closed, so that a closed
// admin's login holds no admin token. The stores keep it on the email's
// reservation, which login reads, and apply it to the user a refresh reads.
func LoginRole(role quire.Role, status Status) quire.Role {
	return role.ActingAs(status != StatusActive)
}
