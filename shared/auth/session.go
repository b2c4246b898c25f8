package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/quireapi/quire/shared/quire"
)

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

// A refresh token is 56 random-looking bytes in base64url: the user id (8
// bytes, so that its session and its user are read in one request), the
// session id (16 random bytes) and a secret (32 random bytes). Only its
// SHA-256 is stored.
const (
	refreshTokenBytes = 8 + 16 + 32
	refreshTokenLen   = (refreshTokenBytes*8 + 5) / 6 // base64url without padding: 75
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
	// Start stores a new session.
	Start(ctx context.Context, s Session) error
	// Resume returns the session id of user and the user's account (its
	// role and current session epoch; no password hash), read together:
	// ENOTFOUND when either is missing.
	Resume(ctx context.Context, user quire.ID, id string) (Session, Account, error)
	// Rotate replaces the session's token hash with next and its idle
	// expiry with idleUntil, on the condition that the hash is still
	// s.TokenHash: ECONFLICT when another request rotated it first.
	Rotate(ctx context.Context, s Session, next string, idleUntil time.Time) error
	// End deletes the session id of user.
	End(ctx context.Context, user quire.ID, id string) error
}

// NewSession returns a new session of user, whose session epoch is epoch,
// started at now, and its first refresh token.
func NewSession(user quire.ID, epoch int64, now time.Time) (Session, string) {
	token, id, hash := newRefreshToken(user, "")
	return Session{ID: id, UserID: user, TokenHash: hash, Epoch: epoch,
		Started: now, IdleUntil: now.Add(RefreshIdle), Ends: now.Add(SessionMax)}, token
}

// SessionOf returns the session that the refresh token token starts, as
// NewSession would, for demo data whose token is known in advance; false
// when token is not a refresh token's shape.
func SessionOf(token string, epoch int64, now time.Time) (Session, bool) {
	user, id, hash, ok := parseRefreshToken(token)
	if !ok {
		return Session{}, false
	}
	return Session{ID: id, UserID: user, TokenHash: hash, Epoch: epoch,
		Started: now, IdleUntil: now.Add(RefreshIdle), Ends: now.Add(SessionMax)}, true
}

// newRefreshToken returns a new refresh token of user and session (a new
// session when it is ""), with the session id and the token's hash.
func newRefreshToken(user quire.ID, session string) (token, id, hash string) {
	var b [refreshTokenBytes]byte
	binary.BigEndian.PutUint64(b[:8], uint64(user))
	if session == "" {
		rand.Read(b[8:24])
	} else {
		hex.Decode(b[8:24], []byte(session)) // an id this package made
	}
	rand.Read(b[24:])
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, hex.EncodeToString(b[8:24]), hashToken(token)
}

// parseRefreshToken returns the user and the session a refresh token names,
// and its hash; false for anything that is not a refresh token's shape.
func parseRefreshToken(token string) (user quire.ID, session, hash string, ok bool) {
	if len(token) != refreshTokenLen {
		return 0, "", "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) != refreshTokenBytes {
		return 0, "", "", false
	}
	id := binary.BigEndian.Uint64(b[:8])
	if id == 0 || id > uint64(quire.MaxID) {
		return 0, "", "", false
	}
	return quire.ID(id), hex.EncodeToString(b[8:24]), hashToken(token), true
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
