package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/telemetry"
)

// Handlers serves login, token refresh, logout and the public keys of the
// tokens it issues.
type Handlers struct {
	Accounts login.Accounts
	Sessions login.Sessions
	Tokens   login.TokenConfig
	// Passwords checks a password against its hash: the auth function's
	// wiring passes Argon2id's (package argon2id), which the authorizer,
	// built from this package too, need not link.
	Passwords password.Hasher
	// LoadKeys, when set, reads the key set for Reload: login then reads
	// it again KeyRefresh after its last read, so that a rotation reaches
	// every warm instance (see KeySet).
	LoadKeys func(context.Context) (KeySet, error)
	// signer holds the keys; nil until SetKeys (a stack whose first key is
	// not written yet), and login is then 503.
	signer atomic.Pointer[signer]
	// loading, when set, is closed once the read LoadInBackground
	// prepared has ended, and startLoading starts that read.
	loading      <-chan struct{}
	startLoading func()
	now          func() time.Time // time.Now; tests set it
}

func (h *Handlers) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// Routes returns the handler of each auth route, keyed as in the route table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{
		"POST /login":                h.login,
		"POST /tokens":               h.refresh,
		"DELETE /session":            h.logout,
		"GET /.well-known/jwks.json": h.jwks,
	}
}

// Credentials is the body of POST /login.
type Credentials struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
}

// check returns each field of c that is missing or longer than any
// account's can be, so that no such email reaches DynamoDB as a key, nor
// such a password the hash.
func (c Credentials) check() error {
	var bad []quire.FieldError
	switch {
	case c.Email == nil:
		bad = append(bad, quire.FieldError{Pointer: "/email", Detail: "is required"})
	case len(*c.Email) > quire.MaxEmailLen:
		bad = append(bad, quire.FieldError{Pointer: "/email", Detail: fmt.Sprintf("must be at most %d bytes", quire.MaxEmailLen)})
	}
	switch {
	case c.Password == nil:
		bad = append(bad, quire.FieldError{Pointer: "/password", Detail: "is required"})
	case utf8.RuneCountInString(*c.Password) > password.MaxLength:
		bad = append(bad, quire.FieldError{Pointer: "/password", Detail: fmt.Sprintf("must be at most %d characters", password.MaxLength)})
	}
	if bad != nil {
		return quire.Invalid(bad...)
	}
	return nil
}

// TokenResponse is the body of a successful login or refresh (RFC 6749
// section 5.1).
type TokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"` // seconds
	RefreshToken     string `json:"refresh_token"`
	RefreshExpiresIn int64  `json:"refresh_expires_in"` // seconds
}

// RefreshRequest is the body of POST /tokens.
type RefreshRequest struct {
	RefreshToken *string `json:"refresh_token"`
}

// errBadCredentials is the one answer to an unknown email and a wrong
// password, so that login does not tell which emails have accounts.
var errBadCredentials = quire.Errorf(quire.EUNAUTHORIZED, "The email or password is wrong.")

func (h *Handlers) login(w http.ResponseWriter, r *rest.Request) error {
	var c Credentials
	if err := rest.Decode(r.Request, &c); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	s, err := h.current(r.Context())
	if err != nil {
		return err
	}
	// The guess is counted, while the account is read, before its
	// password costs a hash: a locked email, known or not, is refused
	// here, and so is a guess whose count failed.
	now := h.clock()
	var acct login.Account
	err = quire.Concurrently(
		func() error { return login.Reserve(r.Context(), h.Accounts, *c.Email, now) },
		func() (err error) {
			if acct, err = h.Accounts.Account(r.Context(), *c.Email); quire.ErrorCode(err) == quire.ENOTFOUND {
				return nil
			}
			return err
		})
	if err != nil {
		return err
	}
	// An unknown email has no hash: Match then checks against a decoy, so
	// both failures cost one hash and look alike.
	if !h.Passwords.Match(acct.PasswordHash, *c.Password) {
		telemetry.Count(r.Context(), telemetry.FailedLogins)
		return errBadCredentials
	}
	session, refresh := NewSession(acct.ID, acct.Epoch, now)
	// Start clears the email's count, which other guesses may be writing.
	if err := quire.Again(r.Context(), func(int) error { return h.Sessions.Start(r.Context(), session, *c.Email) }); err != nil {
		return err
	}
	body, err := s.tokens(acct.ID, acct.Role, session, refresh, h.clock())
	if err != nil {
		return err
	}
	_, err = r.Render(http.StatusOK, body)
	return err
}

// errBadRefresh is the one answer to a refresh token that is malformed,
// unknown, expired, reused or revoked: none tells an attacker more.
var errBadRefresh = quire.Errorf(quire.EUNAUTHORIZED, "The refresh token is not valid; log in again.")

// refresh trades a refresh token for a new access token and a new refresh
// token of the same session; the old one dies. A refresh token that is not
// its session's live one (used before) ends the session.
func (h *Handlers) refresh(w http.ResponseWriter, r *rest.Request) error {
	var body RefreshRequest
	if err := rest.Decode(r.Request, &body); err != nil {
		return err
	}
	if body.RefreshToken == nil {
		return quire.Invalid(quire.FieldError{Pointer: "/refresh_token", Detail: "is required"})
	}
	user, sid, hash, ok := parseRefreshToken(*body.RefreshToken)
	if !ok {
		return errBadRefresh
	}
	s, err := h.current(r.Context())
	if err != nil {
		return err
	}
	session, role, err := h.resume(r, user, sid, hash)
	if err != nil {
		return err
	}
	refresh, _, next := newRefreshToken(user, sid)
	idle := h.clock().Add(login.RefreshIdle)
	err = h.Sessions.Rotate(r.Context(), session, next, idle)
	if _, rotated := errors.AsType[*quire.Stale](err); rotated || quire.ErrorCode(err) == quire.ENOTFOUND {
		// The same token, used by another request meanwhile: reuse.
		return h.revoke(r, session, "refresh token used twice at once")
	}
	if err != nil {
		return err
	}
	session.TokenHash, session.IdleUntil = next, idle
	tokens, err := s.tokens(user, role, session, refresh, h.clock())
	if err != nil {
		return err
	}
	_, err = r.Render(http.StatusOK, tokens)
	return err
}

// resume returns the session sid of user and the user's role when the
// refresh token of hash is the session's live one, the session has not
// expired and the user's sessions have not been revoked since it started;
// else it ends the session and answers errBadRefresh.
func (h *Handlers) resume(r *rest.Request, user quire.ID, sid, hash string) (login.Session, quire.Role, error) {
	session, acct, err := h.Sessions.Resume(r.Context(), user, sid)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		return login.Session{}, "", errBadRefresh
	case err != nil:
		return login.Session{}, "", err
	}
	if why := session.Ended(hash, acct.Epoch, h.clock()); why != "" {
		return login.Session{}, "", h.revoke(r, session, why)
	}
	return session, acct.Role, nil
}

// revoke ends session, logs why (never the token, nor the session's id,
// with which a reader of the log could end another session), and answers
// errBadRefresh.
func (h *Handlers) revoke(r *rest.Request, session login.Session, why string) error {
	slog.WarnContext(r.Context(), "session ended", "reason", why, "user_id", session.UserID, "request_id", rest.RequestID(r.Request))
	if err := h.end(r.Context(), session.UserID, session.ID); err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	return errBadRefresh
}

// end ends the session id of user, again when its commit collided with
// another request ending or changing the session (quire.Again): ENOTFOUND
// when there is none.
func (h *Handlers) end(ctx context.Context, user quire.ID, id string) error {
	return quire.Again(ctx, func(int) error { return h.Sessions.End(ctx, user, id) })
}

// logout ends the session of the caller's access token. The access token
// itself stays valid until it expires.
func (h *Handlers) logout(w http.ResponseWriter, r *rest.Request) error {
	c := r.Caller
	if c.SessionID == "" {
		return quire.Errorf(quire.ENOTFOUND, "This access token belongs to no session.")
	}
	if err := h.end(r.Context(), c.ID, c.SessionID); err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return quire.Errorf(quire.ENOTFOUND, "The session has ended already.")
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handlers) jwks(w http.ResponseWriter, r *rest.Request) error {
	s, err := h.current(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	return rest.JSON(w, r, http.StatusOK, s.keys)
}
