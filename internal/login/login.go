// Package login holds what logging in keeps of a user: the account login
// reads, the failed logins counted against an email and the sessions of
// refresh tokens, what the access tokens it issues claim (TokenConfig), and
// the bounds of those tokens and of the keys that sign them.
// The stores that keep them, the handlers that serve login and every
// function's configuration share it; it links no token signing nor password
// hashing, so that a function that only reads or ends these links neither.
package login

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// Account is what login needs to know of a user.
type Account struct {
	ID           quire.ID
	Role         quire.Role
	PasswordHash string
	// Epoch is the user's session epoch: a change of password, role or
	// status moves it on, ending every session started before.
	Epoch int64
}

// What the stores of logins may find changed as they write: the What of
// their *quire.Stale errors.
const (
	StaleSession  = "session"       // a session's refresh token, rotated by another request
	StaleAttempts = "failed logins" // an email's failed logins, counted by other requests
)

// Accounts finds the account of an email, whatever its case, and counts the
// guesses of its password (see Guess).
type Accounts interface {
	Guesses
	// Account returns the account of email: *quire.Error with ENOTFOUND
	// when no user has the email.
	Account(ctx context.Context, email string) (Account, error)
}

// Guesses counts the guesses of an email's password.
type Guesses interface {
	// Reserve counts a guess of email as g says, in one conditional
	// write, and returns the count after it, this guess included. With
	// nothing counted, it returns the count as stored and a *quire.Stale
	// naming StaleAttempts, for Reserve (the function) to decide again.
	Reserve(ctx context.Context, email string, g Guess) (Attempts, error)
}

// Guesses cost the attacker, not the users. Each guess of an email's
// password (at login, or as the current password when changing one's email
// or password) is counted before the password is checked, in a window that
// starts at the first guess and lasts LoginWindow; at MaxLoginFailures
// guesses the email is locked until the window ends: a guess is 429 with
// Retry-After and its password is not checked (it costs no argon2id hash).
// Counting first makes the limit exact under concurrency: parallel guesses
// each take a place in the window, and the ones past the limit find it
// full. An email nobody has is counted and locked the same way, with the
// same requests, so the lock tells nothing about which emails have
// accounts. The right password clears the count, in the same transaction as
// what it proves; the real owner waits out at most LoginWindow.
//
// An attacker gets MaxLoginFailures guesses per email per LoginWindow: 480
// a day. Spreading guesses over many emails is what the web ACL's per-IP
// limit and the stage's throttling are for.
const (
	MaxLoginFailures = 5
	LoginWindow      = 15 * time.Minute
)

// Attempts are an email's guesses counted in the current window.
type Attempts struct {
	Failures int
	Until    time.Time // the window's end; zero for none
}

// Clean reports whether no guess is counted at now.
func (a Attempts) Clean(now time.Time) bool { return a.Failures == 0 || !now.Before(a.Until) }

// Guess is the reservation of one guess of a password at Now, as a store
// writes it: with Restart false, one more guess in a window that ends after
// Now and holds fewer than Limit (or the first of a new window ending
// Until when the email has none); with Restart true, the first of a new
// window ending Until, over a window that ended by Now. NewGuess and After
// decide it; a store writes exactly that condition.
type Guess struct {
	Now, Until time.Time
	Limit      int
	Restart    bool
}

// NewGuess returns the reservation of a guess at now.
func NewGuess(now time.Time) Guess {
	return Guess{Now: now, Until: now.Add(LoginWindow), Limit: MaxLoginFailures}
}

// After decides what a guess does when its reservation counted nothing and
// found stored: ETHROTTLED, with the wait, when stored is a live window of
// g.Limit guesses; otherwise the reservation to try next, which starts a
// new window when stored's has ended and joins stored's when it has not.
func (g Guess) After(stored Attempts) (Guess, *quire.Error) {
	if stored.Clean(g.Now) {
		g.Restart = true
		return g, nil
	}
	if stored.Failures >= g.Limit {
		// A guess taken at g.Now may find a window another guess started
		// after it: the wait is never longer than a window.
		return g, Locked(int(math.Ceil(min(stored.Until.Sub(g.Now), LoginWindow).Seconds())))
	}
	g.Restart = false
	return g, nil
}

// Reserve counts a guess of email's password at now in s before the
// password is checked: ETHROTTLED when the email is locked, ECONFLICT when
// other guesses of the email kept being counted at the same time, and any
// error of s. Only a guess Reserve counted may have its password checked:
// an error, whatever it is, never becomes a free guess.
func Reserve(ctx context.Context, s Guesses, email string, now time.Time) error {
	g := NewGuess(now)
	for n := 1; ; n++ {
		stored, err := s.Reserve(ctx, email, g)
		if _, stale := errors.AsType[*quire.Stale](err); stale {
			next, locked := g.After(stored)
			if locked != nil {
				return locked
			}
			g = next
		}
		again, err := quire.Retry(ctx, n, err)
		if again {
			continue
		}
		if stale, ok := errors.AsType[*quire.Stale](err); ok && stale.What == StaleAttempts {
			return &quire.Error{Code: quire.ECONFLICT, Message: "Other logins of this email are being counted; retry in a moment.", Err: err}
		}
		return err
	}
}

// Locked is the refusal of a login, or of a proof of the password, for an
// email locked by too many guesses: ETHROTTLED, to try again after seconds.
func Locked(seconds int) *quire.Error {
	return &quire.Error{Code: quire.ETHROTTLED, Message: "Too many failed logins for this email; try again after Retry-After seconds.",
		RetryAfter: max(seconds, 1)}
}

// Sessions end. Login starts one and answers a refresh token with the
// access token; POST /tokens trades the refresh token for a new pair, and
// the old one dies (RFC 9700 section 4.14.2: rotation). A refresh token used
// a second time revokes its whole session, whoever presents it: one of the
// two is a thief. A session ends after RefreshIdle without a refresh, after
// SessionMax in any case, at logout, and when the user's password, role or
// status changes, or the account is closed or deleted (the user's session
// epoch moves on, and every session started before is refused).
//
// Access tokens stay stateless: one issued before its session ended is
// accepted until it expires, at most its lifetime (15 minutes by default).
const (
	RefreshIdle = 7 * 24 * time.Hour
	SessionMax  = 30 * 24 * time.Hour
)

// Session is a login's chain of refresh tokens.
type Session struct {
	ID     string // 32 hex digits
	UserID quire.ID
	// TokenHash is the SHA-256 of the session's one live refresh token.
	TokenHash string
	// Epoch is the user's session epoch when the session started.
	Epoch     int64
	Started   time.Time
	IdleUntil time.Time // the live refresh token's expiry
	Ends      time.Time // Started + SessionMax
}

// Ended returns why s, resumed at now with the refresh token of hash by a
// user whose session epoch is epoch, has ended: the token is not the
// session's live one (a reuse), the session expired, or the user's sessions
// were revoked since it started; "" while it lives.
func (s Session) Ended(hash string, epoch int64, now time.Time) string {
	switch {
	case subtle.ConstantTimeCompare([]byte(s.TokenHash), []byte(hash)) != 1:
		return "refresh token reused"
	case !now.Before(s.Expiry()):
		return "session expired"
	case epoch != s.Epoch:
		return "sessions revoked since"
	}
	return ""
}

// Expiry returns when the session ends if nothing ends it before.
func (s Session) Expiry() time.Time {
	if s.IdleUntil.Before(s.Ends) {
		return s.IdleUntil
	}
	return s.Ends
}

// Sessions keeps sessions. Its methods return *quire.Error with ENOTFOUND
// for a session that does not exist (or no longer does).
type Sessions interface {
	// Start stores a new session and forgets the guesses counted against
	// email, whose password started it, in one transaction: both or
	// neither.
	Start(ctx context.Context, s Session, email string) error
	// Resume returns the session id of user and the user's account (its
	// role and current session epoch; no password hash), read together:
	// ENOTFOUND when either is missing.
	Resume(ctx context.Context, user quire.ID, id string) (Session, Account, error)
	// Rotate replaces the session's token hash with next and its idle
	// expiry with idleUntil, on the condition that the hash is still
	// s.TokenHash: a *quire.Stale naming StaleSession when another request
	// rotated it first, ENOTFOUND when the session is gone.
	Rotate(ctx context.Context, s Session, next string, idleUntil time.Time) error
	// End deletes the session id of user.
	End(ctx context.Context, user quire.ID, id string) error
}

// Access token lifetimes.
const (
	// DefaultLifetime is how long a token is valid unless configured.
	DefaultLifetime = 15 * time.Minute
	// MinLifetime and MaxLifetime bound a configured lifetime.
	MinLifetime = time.Minute
	MaxLifetime = 12 * time.Hour
)

// Default claim values, for a Quire run locally.
const (
	DefaultIssuer   = "quire"
	DefaultAudience = "quire-api"
)

// ClockLeeway is the clock skew allowed on an access token's exp, nbf and
// iat, one for all: the authorizer takes a token until its exp and this
// long after, and so do the functions, which check exp again.
const ClockLeeway = 30 * time.Second

// What the documents say of access tokens and of the keys that sign them,
// which auth issues, verifies and rotates: this package, which every
// function links, links no token signing.
const (
	// MaxTokenBytes bounds an access token: auth issues none longer, and
	// parses none longer. Quire's are about 300 bytes.
	MaxTokenBytes = 2048
	// MaxKeys bounds a set of keys: the authorizer carries it in an
	// environment variable (4 KB in all), about 180 bytes a key.
	MaxKeys = 8
	// MaxKeyIDLen bounds a key's id, as auth makes it (its creation time,
	// 20060102T150405Z, a dash and 4 random bytes in base64url): it reads
	// no set with a longer one.
	MaxKeyIDLen = len("20060102T150405Z") + len("-") + 6
)

// TokenConfig says what the access tokens login issues claim and how long
// they last.
type TokenConfig struct {
	Issuer   string
	Audience string
	Lifetime time.Duration
}

// TokenConfigFromEnv reads TOKEN_ISSUER, TOKEN_AUDIENCE and TOKEN_LIFETIME (a
// Go duration such as 15m), with defaults. It returns an error for a lifetime
// that does not parse or is out of bounds.
func TokenConfigFromEnv(getenv func(string) string) (TokenConfig, error) {
	c := TokenConfig{Issuer: getenv("TOKEN_ISSUER"), Audience: getenv("TOKEN_AUDIENCE"), Lifetime: DefaultLifetime}
	if c.Issuer == "" {
		c.Issuer = DefaultIssuer
	}
	if c.Audience == "" {
		c.Audience = DefaultAudience
	}
	if s := getenv("TOKEN_LIFETIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < MinLifetime || d > MaxLifetime {
			return c, fmt.Errorf("TOKEN_LIFETIME %q: want a duration from %v to %v", s, MinLifetime, MaxLifetime)
		}
		c.Lifetime = d
	}
	return c, nil
}
