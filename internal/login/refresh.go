package login

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// A refresh token is 56 random-looking bytes in base64url, RefreshTokenLen
// characters: the user id (8 bytes, so that its session and its user are
// read in one request), the session id (16 random bytes) and a secret (32
// random bytes). Only its SHA-256 is stored.
const (
	refreshTokenBytes = 8 + 16 + 32
	RefreshTokenLen   = (refreshTokenBytes*8 + 5) / 6 // base64url without padding: 75
)

// NewSession returns a new session of user, whose session epoch is epoch,
// started at now, and its first refresh token.
func NewSession(user quire.ID, epoch int64, now time.Time) (Session, string) {
	token, id, hash := NewRefreshToken(user, "")
	return Session{ID: id, UserID: user, TokenHash: hash, Epoch: epoch,
		Started: now, IdleUntil: now.Add(RefreshIdle), Ends: now.Add(SessionMax)}, token
}

// SessionOf returns the session that the refresh token token starts, as
// NewSession would, for demo data whose token is known in advance; false
// when token is not a refresh token's shape.
func SessionOf(token string, epoch int64, now time.Time) (Session, bool) {
	user, id, hash, ok := ParseRefreshToken(token)
	if !ok {
		return Session{}, false
	}
	return Session{ID: id, UserID: user, TokenHash: hash, Epoch: epoch,
		Started: now, IdleUntil: now.Add(RefreshIdle), Ends: now.Add(SessionMax)}, true
}

// NewRefreshToken returns a new refresh token of user and session (a new
// session when it is ""), with the session id and the token's hash.
func NewRefreshToken(user quire.ID, session string) (token, id, hash string) {
	var b [refreshTokenBytes]byte
	binary.BigEndian.PutUint64(b[:8], uint64(user))
	if session == "" {
		rand.Read(b[8:24])
	} else {
		_, _ = hex.Decode(b[8:24], []byte(session)) // an id this package made: 32 hex digits, which decode
	}
	rand.Read(b[24:])
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, hex.EncodeToString(b[8:24]), hashToken(token)
}

// ParseRefreshToken returns the user and the session a refresh token names,
// and its hash; false for anything that is not a refresh token's shape.
func ParseRefreshToken(token string) (user quire.ID, session, hash string, ok bool) {
	if len(token) != RefreshTokenLen {
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
