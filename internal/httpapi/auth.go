package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/telemetry"
)

// Auth serves login, token refresh, logout and the public keys of the
// tokens it issues.
type Auth struct {
	Accounts login.Accounts
	Sessions login.Sessions
	// Passwords checks a password against its hash: the auth function's
	// wiring passes Argon2id's (package argon2id), which the authorizer
	// need not link.
	Passwords password.Hasher
	// Keys signs the access tokens: the auth function's *auth.KeyRing.
	Keys Signer
}

// Signer signs access tokens with keys it reads and rotates.
type Signer interface {
	// Ready returns the time by the signer's clock once it can sign:
	// EUNAVAILABLE while its keys are not read.
	Ready(ctx context.Context) (time.Time, error)
	// AccessToken returns an access token of user with role in the session
	// sid, and how long it lives.
	AccessToken(ctx context.Context, user quire.ID, role quire.Role, sid string) (string, time.Duration, error)
	// JWKS returns the public keys of the tokens, a JWK Set.
	JWKS(ctx context.Context) (json.RawMessage, error)
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

// tokens returns the body of the answer to a login or a refresh: a new
// access token of user, with role, in session, and refresh, the session's
// refresh token.
func (h *Auth) tokens(ctx context.Context, user quire.ID, role quire.Role, session login.Session, refresh string, now time.Time) (TokenResponse, error) {
	access, lifetime, err := h.Keys.AccessToken(ctx, user, role, session.ID)
	if err != nil {
		return TokenResponse{}, err
	}
	return TokenResponse{
		AccessToken:      access,
		TokenType:        "Bearer",
		ExpiresIn:        int64(lifetime.Seconds()),
		RefreshToken:     refresh,
		RefreshExpiresIn: int64(session.Expiry().Sub(now).Seconds()),
	}, nil
}

// Routes returns the handler of each auth route, keyed as in the route table.
func (h *Auth) Routes() rest.Handlers {
	return rest.Handlers{
		"POST /login":                h.login,
		"POST /tokens":               h.refresh,
		"DELETE /session":            h.logout,
		"GET /.well-known/jwks.json": h.jwks,
	}
}

// Login is the body of POST /login.
type Login struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
}

// check returns each field of c that is missing or longer than any
// account's can be, so that no such email reaches DynamoDB as a key, nor
// such a password the hash.
func (c Login) check() error {
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
	case password.CheckGuess(*c.Password) != "":
		bad = append(bad, quire.FieldError{Pointer: "/password", Detail: password.CheckGuess(*c.Password)})
	}
	if bad != nil {
		return quire.Invalid(bad...)
	}
	return nil
}

// RefreshRequest is the body of POST /tokens.
type RefreshRequest struct {
	RefreshToken *string `json:"refresh_token"`
}

// errBadCredentials is the one answer to an unknown email and a wrong
// password, so that login does not tell which emails have accounts.
var errBadCredentials = quire.Errorf(quire.EUNAUTHORIZED, "The email or password is wrong.")

func (h *Auth) login(w http.ResponseWriter, r *rest.Request) error {
	var c Login
	if err := rest.Decode(r.Request, &c); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	now, err := h.Keys.Ready(r.Context())
	if err != nil {
		return err
	}
	// The guess is counted, while the account is read, before its
	// password costs a hash: a locked email, known or not, is refused
	// here, and so is a guess whose count failed.
	reserved := make(chan error, 1)
	go func() { reserved <- login.Reserve(r.Context(), h.Accounts, *c.Email, now) }()
	acct, err := h.Accounts.Account(r.Context(), *c.Email)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		err = nil // an unknown email: its guess is counted as a known one's
	}
	if err := cmp.Or(<-reserved, err); err != nil {
		return err
	}
	// An unknown email has no hash: Match then checks against a decoy, so
	// both failures cost one hash and look alike.
	if !h.Passwords.Match(acct.PasswordHash, *c.Password) {
		telemetry.Count(r.Context(), telemetry.FailedLogins)
		return errBadCredentials
	}
	session, refresh := login.NewSession(acct.ID, acct.Epoch, now)
	// Start clears the email's count, which other guesses may be writing.
	for n := 1; ; n++ {
		again, err := quire.Retry(r.Context(), n, h.Sessions.Start(r.Context(), session, *c.Email))
		if err != nil {
			return err
		}
		if !again {
			break
		}
	}
	body, err := h.tokens(r.Context(), acct.ID, acct.Role, session, refresh, now)
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
func (h *Auth) refresh(w http.ResponseWriter, r *rest.Request) error {
	var body RefreshRequest
	if err := rest.Decode(r.Request, &body); err != nil {
		return err
	}
	switch {
	case body.RefreshToken == nil:
		return quire.Invalid(quire.FieldError{Pointer: "/refresh_token", Detail: "is required"})
	case utf8.RuneCountInString(*body.RefreshToken) > login.RefreshTokenLen:
		return quire.Invalid(quire.FieldError{Pointer: "/refresh_token",
			Detail: fmt.Sprintf("must be at most %d characters, a refresh token's length", login.RefreshTokenLen)})
	}
	user, sid, hash, ok := login.ParseRefreshToken(*body.RefreshToken)
	if !ok {
		return errBadRefresh
	}
	now, err := h.Keys.Ready(r.Context())
	if err != nil {
		return err
	}
	session, role, err := h.resume(r, user, sid, hash, now)
	if err != nil {
		return err
	}
	refresh, _, next := login.NewRefreshToken(user, sid)
	idle := now.Add(login.RefreshIdle)
	err = h.Sessions.Rotate(r.Context(), session, next, idle)
	if _, rotated := errors.AsType[*quire.Stale](err); rotated || quire.ErrorCode(err) == quire.ENOTFOUND {
		// The same token, used by another request meanwhile: reuse.
		return h.revoke(r, session, "refresh token used twice at once")
	}
	if err != nil {
		return err
	}
	session.TokenHash, session.IdleUntil = next, idle
	tokens, err := h.tokens(r.Context(), user, role, session, refresh, now)
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
func (h *Auth) resume(r *rest.Request, user quire.ID, sid, hash string, now time.Time) (login.Session, quire.Role, error) {
	session, acct, err := h.Sessions.Resume(r.Context(), user, sid)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		return login.Session{}, "", errBadRefresh
	case err != nil:
		return login.Session{}, "", err
	}
	if why := session.Ended(hash, acct.Epoch, now); why != "" {
		return login.Session{}, "", h.revoke(r, session, why)
	}
	return session, acct.Role, nil
}

// revoke ends session, logs why (never the token, nor the session's id,
// with which a reader of the log could end another session), and answers
// errBadRefresh.
func (h *Auth) revoke(r *rest.Request, session login.Session, why string) error {
	slog.WarnContext(r.Context(), "session ended", "reason", why, "user_id", session.UserID, "request_id", rest.RequestID(r.Request))
	if err := h.end(r.Context(), session.UserID, session.ID); err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	return errBadRefresh
}

// end ends the session id of user, again when its commit collided with
// another request ending or changing the session (see quire.Retry): ENOTFOUND
// when there is none.
func (h *Auth) end(ctx context.Context, user quire.ID, id string) error {
	for n := 1; ; n++ {
		if again, err := quire.Retry(ctx, n, h.Sessions.End(ctx, user, id)); !again {
			return err
		}
	}
}

// logout ends the session of the caller's access token. The access token
// itself stays valid until it expires.
func (h *Auth) logout(w http.ResponseWriter, r *rest.Request) error {
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

func (h *Auth) jwks(w http.ResponseWriter, r *rest.Request) error {
	keys, err := h.Keys.JWKS(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	return rest.JSON(w, r, http.StatusOK, keys)
}
