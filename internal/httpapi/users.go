package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/telemetry"
	"github.com/quireapi/quire/internal/users"
)

// Users serves the users resource from a users.Store.
//
// A customer sees and changes only their own user: another user's id is
// 404, exactly as if it did not exist, and GET /users lists only them. An
// admin sees and changes every user.
type Users struct {
	Store users.Store
	// Passwords hashes new passwords and checks current ones: the users
	// function's main passes Argon2id's (package argon2id), which the
	// packages that share users' types need not link.
	Passwords password.Hasher
}

// Routes returns the handler of each users route, keyed as in the route
// table.
func (h *Users) Routes() rest.Handlers {
	return rest.Handlers{
		"GET /users":               h.list,
		"POST /users":              h.create,
		"GET /users/{id}":          h.get,
		"PUT /users/{id}":          h.replace,
		"DELETE /users/{id}":       h.delete,
		"GET /users/{id}/profile":  h.getProfile,
		"PUT /users/{id}/profile":  h.replaceProfile,
		"POST /users/{id}/deposit": h.deposit,
		"POST /users/{id}/close":   h.close,
		"GET /admin/users":         h.listAll,
	}
}

// embedProfile reads the embed query parameter: "profile" or nothing.
func embedProfile(r *rest.Request) (bool, error) {
	e, ok, err := rest.Param(r.Request, "embed")
	if err != nil || !ok {
		return false, err
	}
	if e != "profile" {
		return false, rest.ParamError("embed", "may only be profile")
	}
	return true, nil
}

// list answers an admin with the active users (with the role the role
// query parameter names, if any), a page at a time, and a customer with
// their own user (when it has that role).
func (h *Users) list(w http.ResponseWriter, r *rest.Request) error {
	q, embed, err := userQuery(r)
	if err != nil {
		return err
	}
	role, ok, err := rest.Param(r.Request, "role")
	if err != nil {
		return err
	}
	if q.Role = quire.Role(role); ok && !q.Role.Valid() {
		return rest.ParamError("role", `must be "customer" or "admin"`)
	}
	c := r.Caller
	if c.Admin() {
		return h.page(w, r, q, embed)
	}
	us := []users.User{}
	switch u, err := h.Store.Get(r.Context(), c.ID); quire.ErrorCode(err) {
	case "":
		if q.After < u.ID && (q.Role == "" || q.Role == u.Role) {
			us = append(us, *u)
		}
	case quire.ENOTFOUND: // deleted since the token was issued
	default:
		return err
	}
	return rest.JSON(w, r, http.StatusOK, representAll(r, c, us, embed))
}

// listAll answers every user in any status, a page at a time.
func (h *Users) listAll(w http.ResponseWriter, r *rest.Request) error {
	q, embed, err := userQuery(r)
	if err != nil {
		return err
	}
	if _, ok, _ := rest.Param(r.Request, "role"); ok {
		return rest.ParamError("role", "filters active users: use GET /users?role=")
	}
	q.AnyStatus = true
	return h.page(w, r, q, embed)
}

// userQuery reads a page's query parameters: the page, and whether each
// user comes with its profile (embed=profile), which every user item holds.
func userQuery(r *rest.Request) (q users.ListQuery, embed bool, err error) {
	limit, after, err := rest.ParseIDPage(r.Request)
	if err != nil {
		return users.ListQuery{}, false, err
	}
	embed, err = embedProfile(r)
	return users.ListQuery{Limit: limit, After: after}, embed, err
}

func (h *Users) page(w http.ResponseWriter, r *rest.Request, q users.ListQuery, embed bool) error {
	us, next, err := h.Store.List(r.Context(), q)
	if err != nil {
		return err
	}
	if next != 0 {
		rest.SetNext(w, r.Request, next.String())
	}
	return rest.JSON(w, r, http.StatusOK, representAll(r, r.Caller, us, embed))
}

// create signs a new customer up. The route is public: whatever the body
// says, the user is an active customer. A sign-up of a taken email, which
// tells that the email has an account, is counted as a guess of it, as a
// failed login is (login.Reserve): once the email is locked, it is 429 as
// a login is, so that learning which emails have accounts costs what
// guessing their passwords does.
func (h *Users) create(w http.ResponseWriter, r *rest.Request) error {
	var f users.Fields
	if err := rest.Decode(r.Request, &f); err != nil {
		return err
	}
	u, err := f.SignUp(r.Version)
	if err != nil {
		return err
	}
	hash := h.Passwords.Hash(*f.Password)
	for n := 1; ; n++ {
		ch := users.Signed(*u, time.Now())
		stored := ch.User
		rec, err := r.Created("/users/"+stored.ID.String(), represent(r, r.Caller, &stored, false))
		if err != nil {
			return err
		}
		err = users.Committed(h.Store.CommitCreate(r.Context(), ch, hash, rec), stored)
		if quire.ErrorCode(err) == quire.EEMAILTAKEN {
			if locked := login.Reserve(r.Context(), h.Store, u.Email, time.Now()); locked != nil {
				return locked
			}
		}
		if again, err := quire.Retry(r.Context(), n, err); !again {
			return users.NoFreeID(err)
		}
	}
}

// ownID returns the id in the path and the caller, when the caller may act
// on that user, and ENOTFOUND otherwise, so that other users' ids look
// unused.
func ownID(r *rest.Request) (quire.ID, access.Caller, error) {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return 0, access.Caller{}, err
	}
	caller := r.Caller
	if !caller.Owns(id) {
		// The log says why: another user's id, not a missing user.
		return 0, access.Caller{}, &quire.Error{Code: quire.ENOTFOUND, Message: fmt.Sprintf(users.NoSuchUser, id), Err: errAnotherUser}
	}
	return id, caller, nil
}

// errAnotherUser is the cause ownID logs when it hides another user's id.
var errAnotherUser = errors.New("the id is another user's")

func (h *Users) get(w http.ResponseWriter, r *rest.Request) error {
	id, caller, err := ownID(r)
	if err != nil {
		return err
	}
	embed, err := embedProfile(r)
	if err != nil {
		return err
	}
	u, err := h.Store.Get(r.Context(), id)
	if err != nil {
		return users.NoUser(err, id)
	}
	rest.SetETag(w, r, u.Hash)
	return rest.JSON(w, r, http.StatusOK, represent(r, caller, u, embed))
}

// replace stores the user's fields: email and names; a new password when
// the body has one; role and status only from an admin. A change of one's
// own email or password needs the current password (see proveIdentity).
func (h *Users) replace(w http.ResponseWriter, r *rest.Request) error {
	id, caller, err := ownID(r)
	if err != nil {
		return err
	}
	var f users.Fields
	if err := rest.Decode(r.Request, &f); err != nil {
		return err
	}
	u, err := f.User(r.Version, caller.Admin())
	if err != nil {
		return err
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	u.ID = id
	own := caller.ID == id
	if f.Password != nil && own && f.CurrentPassword == nil {
		return needCurrentPassword()
	}
	var (
		proven       *users.Credentials // proved already, in an earlier attempt
		passwordHash string             // once the current password is proved, if it must be
	)
	for n := 1; ; n++ {
		read, err := h.Store.Stored(r.Context(), id)
		if err != nil {
			return users.NoUser(err, id)
		}
		if err := pre.Check(read.User.Hash); err != nil {
			return err
		}
		if err := users.OwnStanding(read.User, *u, caller.ID); err != nil {
			return err
		}
		proof := own && users.NeedsProof(read.User, *u, f.Password != nil)
		if c := read.Credentials(); proof && (proven == nil || *proven != c) {
			if err := h.proveIdentity(r, f.CurrentPassword, c); err != nil {
				return err
			}
			proven = &c
		}
		if f.Password != nil && passwordHash == "" {
			passwordHash = h.Passwords.Hash(*f.Password)
		}
		rev := users.Revise(read, *u, passwordHash, proof, time.Now())
		err = users.Committed(h.Store.CommitRevision(r.Context(), rev), rev.User)
		if again, err := quire.Retry(r.Context(), n, err); !again {
			if err != nil {
				return users.Changed(err, id)
			}
			rest.SetETag(w, r, rev.User.Hash)
			return rest.JSON(w, r, http.StatusOK, represent(r, caller, &rev.User, false))
		}
	}
}

// proveIdentity asks for the current password when the caller changes the
// email or the password of their own account (Replace calls it then, with
// the stored credentials c), so that a stolen access token cannot take the
// account over: none given is EINVALID. The guess is counted against the
// account's email before the password is checked, as a login's is: a
// locked email is ETHROTTLED, right password or wrong, and a wrong one is
// EWRONGPASSWORD. The right one clears the count as the change commits. An
// admin changing another user's account needs none.
func (h *Users) proveIdentity(r *rest.Request, current *string, c users.Credentials) error {
	if current == nil {
		return needCurrentPassword()
	}
	if err := login.Reserve(r.Context(), h.Store, c.Email, time.Now()); err != nil {
		return err
	}
	if h.Passwords.Match(c.PasswordHash, *current) {
		return nil
	}
	telemetry.Count(r.Context(), telemetry.FailedLogins)
	return quire.Errorf(quire.EWRONGPASSWORD, "The current password is wrong; nothing was changed.")
}

func needCurrentPassword() error {
	return quire.Invalid(quire.FieldError{Pointer: "/current_password", Detail: "is required to change the email or the password"})
}

func (h *Users) getProfile(w http.ResponseWriter, r *rest.Request) error {
	id, _, err := ownID(r)
	if err != nil {
		return err
	}
	u, err := h.Store.Get(r.Context(), id)
	if err != nil {
		return users.NoUser(err, id)
	}
	rest.SetETag(w, r, u.Hash)
	return rest.JSON(w, r, http.StatusOK, u.Profile)
}

func (h *Users) replaceProfile(w http.ResponseWriter, r *rest.Request) error {
	id, _, err := ownID(r)
	if err != nil {
		return err
	}
	var p users.Profile
	if err := rest.Decode(r.Request, &p); err != nil {
		return err
	}
	if p, err = p.Check(); err != nil {
		return err
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		u, err := h.Store.Get(r.Context(), id)
		if err != nil {
			return users.NoUser(err, id)
		}
		ch, err := users.Reprofiled(*u, p, pre, time.Now())
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, users.Committed(h.Store.CommitProfile(r.Context(), ch, nil), ch.User)); !again {
			if err != nil {
				return users.Changed(err, id)
			}
			rest.SetETag(w, r, ch.User.Hash)
			return rest.JSON(w, r, http.StatusOK, ch.User.Profile)
		}
	}
}

// deposit adds money to an active account and answers the user as it is
// now. Only an admin may (the route table's access): a deposit is money the
// shop received outside the API, recorded by its back office.
func (h *Users) deposit(w http.ResponseWriter, r *rest.Request) error {
	id, caller, err := ownID(r)
	if err != nil {
		return err
	}
	var d users.Deposit
	if err := rest.Decode(r.Request, &d); err != nil {
		return err
	}
	amount, err := d.Valid()
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		u, err := h.Store.Get(r.Context(), id)
		if err != nil {
			return users.NoUser(err, id)
		}
		ch, err := users.Credit(*u, amount, time.Now())
		if err != nil {
			return err
		}
		rec, err := r.Render(http.StatusOK, represent(r, caller, &ch.User, false))
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, users.Committed(h.Store.CommitDeposit(r.Context(), ch, rec), ch.User)); !again {
			return users.Changed(err, id)
		}
	}
}

// close closes an active account; its balance stays, frozen.
func (h *Users) close(w http.ResponseWriter, r *rest.Request) error {
	id, caller, err := ownID(r)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		u, err := h.Store.Get(r.Context(), id)
		if err != nil {
			return users.NoUser(err, id)
		}
		ch, err := users.CloseAccount(*u, time.Now())
		if err != nil {
			return err
		}
		rec, err := r.Render(http.StatusOK, represent(r, caller, &ch.User, false))
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, users.Committed(h.Store.CommitClose(r.Context(), ch, rec), ch.User)); !again {
			return users.Changed(err, id)
		}
	}
}

// delete removes a user. One's own account needs the current password, as
// a change of its email does: a stolen access token cannot delete it. An
// admin deleting another's needs none, and may send no body.
func (h *Users) delete(w http.ResponseWriter, r *rest.Request) error {
	id, caller, err := ownID(r)
	if err != nil {
		return err
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	var f struct {
		CurrentPassword *string `json:"current_password"`
	}
	if err := rest.DecodeOptional(r.Request, &f); err != nil {
		return err
	}
	own := caller.ID == id
	switch {
	case own && f.CurrentPassword == nil:
		return quire.Invalid(quire.FieldError{Pointer: "/current_password", Detail: "is required to delete one's own account"})
	case f.CurrentPassword != nil && password.CheckGuess(*f.CurrentPassword) != "":
		return quire.Invalid(quire.FieldError{Pointer: "/current_password", Detail: password.CheckGuess(*f.CurrentPassword)})
	}
	proved := !own
	for n := 1; ; n++ {
		var (
			read     users.Stored
			readErr  error
			readUser = make(chan struct{})
			d        users.Deletion
		)
		go func() { // the user and its sessions are read at once
			defer close(readUser)
			read, readErr = h.Store.Stored(r.Context(), id)
		}()
		d.Sessions, d.More, err = h.Store.Sessions(r.Context(), id)
		<-readUser
		if readErr != nil {
			return users.NoUser(readErr, id)
		}
		if err != nil {
			return err
		}
		if err := pre.Check(read.User.Hash); err != nil {
			return err
		}
		if !proved {
			if err := h.proveIdentity(r, f.CurrentPassword, read.Credentials()); err != nil {
				return err
			}
			proved = true
		}
		d.User = read.User
		if d.Event, err = users.Deleted(d.User, caller.ID, time.Now()); err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, users.Committed(h.Store.CommitDelete(r.Context(), d), d.User)); !again {
			if err != nil {
				return users.Changed(err, id)
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
}

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
	ID        quire.ID       `json:"id"`
	Email     string         `json:"email"`
	FirstName string         `json:"first_name"`
	LastName  string         `json:"last_name"`
	Role      quire.Role     `json:"role"`
	Status    users.Status   `json:"status"`
	Balance   quire.Money    `json:"balance"`
	Profile   *users.Profile `json:"profile,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Links     Links          `json:"_links"`
}

// V2 is a user in API v2: one name instead of first and last names.
type V2 struct {
	ID        quire.ID       `json:"id"`
	Email     string         `json:"email"`
	Name      string         `json:"name"`
	Role      quire.Role     `json:"role"`
	Status    users.Status   `json:"status"`
	Balance   quire.Money    `json:"balance"`
	Profile   *users.Profile `json:"profile,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Links     Links          `json:"_links"`
}

// represent returns u as the version r asked for, with the links caller may
// follow, and with its profile when embed is true.
func represent(r *rest.Request, caller access.Caller, u *users.User, embed bool) any {
	var links Links
	if u.Status == users.StatusActive {
		base := r.Path("/users/" + u.ID.String())
		if caller.Admin() {
			links.Deposit = base + "/deposit"
		}
		if caller.Owns(u.ID) {
			links.CloseAccount = base + "/close"
		}
	}
	var profile *users.Profile
	if embed {
		profile = &u.Profile
	}
	if r.Version >= 2 {
		return V2{u.ID, u.Email, u.Name(), u.Role, u.Status, u.Balance, profile, u.CreatedAt, u.UpdatedAt, links}
	}
	return V1{u.ID, u.Email, u.FirstName, u.LastName, u.Role, u.Status, u.Balance, profile, u.CreatedAt, u.UpdatedAt, links}
}

func representAll(r *rest.Request, caller access.Caller, us []users.User, embed bool) []any {
	out := make([]any, len(us))
	for i := range us {
		out[i] = represent(r, caller, &us[i], embed)
	}
	return out
}
