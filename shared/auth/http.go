package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quireapi/quire/shared/password"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
)

// Account is what login needs to know of a user.
type Account struct {
	ID           quire.ID
	Role         quire.Role
	PasswordHash string
}

// Accounts finds the account of an email, whatever its case. It returns
// *quire.Error with ENOTFOUND when no user has the email.
type Accounts interface {
	Account(ctx context.Context, email string) (Account, error)
}

// Handlers serves login and the public keys of the tokens it issues.
type Handlers struct {
	Accounts Accounts
	Tokens   TokenConfig
	// LoadKeys, when set, reads the key set for Reload: login then reads
	// it again KeyRefresh after its last read, so that a rotation reaches
	// every warm instance (see KeySet).
	LoadKeys func(context.Context) (KeySet, error)
	// signer holds the keys; nil until SetKeys (a stack whose first key is
	// not written yet), and login is then 503.
	signer atomic.Pointer[signer]
	now    func() time.Time // time.Now; tests set it
}

type signer struct {
	issuer *Issuer
	keys   KeySet    // public halves, as published
	read   time.Time // when the keys were set
}

// SetKeys makes keys' signing key (see KeySet.Signing) sign the tokens
// login issues from now on, and publishes their public halves. It returns an
// error when keys has no private key.
func (h *Handlers) SetKeys(keys KeySet) error {
	iss, err := NewIssuer(keys, h.Tokens)
	if err != nil {
		return err
	}
	now := h.clock()
	iss.now = h.clock
	iss.key, _ = keys.Signing(now)
	h.signer.Store(&signer{issuer: iss, keys: keys.PublicSet(), read: now})
	return nil
}

func (h *Handlers) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// Reload sets the keys LoadKeys reads.
func (h *Handlers) Reload(ctx context.Context) error {
	if h.LoadKeys == nil {
		return errors.New("auth: no key source")
	}
	keys, err := h.LoadKeys(ctx)
	if err != nil {
		return err
	}
	return h.SetKeys(keys)
}

// current returns the signer, reading the keys again when there is none
// or, with LoadKeys, when they were read KeyRefresh ago or more. When they
// cannot be read, the keys read last serve until they are KeyMaxStale old,
// and login is 503 after that.
func (h *Handlers) current(ctx context.Context) (*signer, error) {
	s := h.signer.Load()
	if s != nil && (h.LoadKeys == nil || h.clock().Sub(s.read) < KeyRefresh) {
		return s, nil
	}
	err := h.Reload(ctx)
	switch {
	case err == nil:
		return h.signer.Load(), nil
	case s != nil && h.clock().Sub(s.read) < KeyMaxStale:
		slog.WarnContext(ctx, "signing keys not read again; the keys read last still sign", "read", s.read, "err", err)
		return s, nil
	case s != nil:
		return nil, &quire.Error{Code: quire.EUNAVAILABLE, Message: "The signing keys cannot be read.", Err: err}
	default:
		return nil, &quire.Error{Code: quire.EUNAVAILABLE, Message: "The signing keys are not set up yet.", Err: err}
	}
}

// Routes returns the handler of each auth route, keyed as in the route table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{
		"POST /login":                h.login,
		"GET /.well-known/jwks.json": h.jwks,
	}
}

// Credentials is the body of POST /login.
type Credentials struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
}

// TokenResponse is the body of a successful login (RFC 6749 section 5.1).
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
}

// errBadCredentials is the one answer to an unknown email and a wrong
// password, so that login does not tell which emails have accounts.
var errBadCredentials = quire.Errorf(quire.EUNAUTHORIZED, "The email or password is wrong.")

func (h *Handlers) login(w http.ResponseWriter, r *http.Request) error {
	var c Credentials
	if err := rest.Decode(r, &c); err != nil {
		return err
	}
	var missing []quire.FieldError
	if c.Email == nil {
		missing = append(missing, quire.FieldError{Pointer: "/email", Detail: "is required"})
	}
	if c.Password == nil {
		missing = append(missing, quire.FieldError{Pointer: "/password", Detail: "is required"})
	}
	if missing != nil {
		return quire.Invalid(missing...)
	}
	s, err := h.current(r.Context())
	if err != nil {
		return err
	}
	acct, err := h.Accounts.Account(r.Context(), *c.Email)
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	// An unknown email has no hash: Match then checks against a decoy, so
	// both failures cost one hash and look alike.
	if !password.Match(acct.PasswordHash, *c.Password) {
		return errBadCredentials
	}
	token, err := s.issuer.Issue(acct.ID, acct.Role)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return rest.JSON(w, r, http.StatusOK, TokenResponse{
		AccessToken: token,
		TokenType:   "Bearer",
		ExpiresIn:   int64(s.issuer.Lifetime().Seconds()),
	})
}

func (h *Handlers) jwks(w http.ResponseWriter, r *http.Request) error {
	s, err := h.current(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	return rest.JSON(w, r, http.StatusOK, s.keys)
}
