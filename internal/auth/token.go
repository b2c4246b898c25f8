package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
)

// Claims are the claims of a Quire access token: the registered ones, with
// the user id as sub, the user's role, and the id of the session login
// started (absent from a token issued without one).
type Claims struct {
	jwt.RegisteredClaims
	Role      quire.Role `json:"role"`
	SessionID string     `json:"sid,omitempty"`
}

// Identity is who a verified token speaks for.
type Identity struct {
	UserID    quire.ID
	Role      quire.Role
	SessionID string
	Expires   time.Time
}

// Issuer signs access tokens with the signing key of a set (see
// KeySet.Signing).
type Issuer struct {
	key    Key
	config login.TokenConfig
	// Now is the clock tokens are issued by: time.Now, which tests set.
	Now func() time.Time
}

// NewIssuer returns an Issuer that signs with keys' signing key. It returns
// an error when the set has no private key.
func NewIssuer(keys KeySet, c login.TokenConfig) (*Issuer, error) {
	k, ok := keys.Signing(time.Now())
	if !ok {
		return nil, errors.New("new issuer: the key set has no private key")
	}
	return &Issuer{key: k, config: c, Now: time.Now}, nil
}

// Issue returns a signed token for a user, valid from now for the
// configured lifetime, of no session.
func (i *Issuer) Issue(id quire.ID, role quire.Role) (string, error) {
	return i.IssueInSession(id, role, "")
}

// IssueInSession returns a signed token for a user in the session sid, which
// logout ends.
func (i *Issuer) IssueInSession(id quire.ID, role quire.Role, sid string) (string, error) {
	now := i.Now().Truncate(time.Second)
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.config.Issuer,
			Subject:   id.String(),
			Audience:  jwt.ClaimStrings{i.config.Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(i.config.Lifetime)),
		},
		Role:      role,
		SessionID: sid,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["kid"] = i.key.ID
	s, err := t.SignedString(i.key.Private)
	if err != nil {
		return "", fmt.Errorf("sign token for user %d: %w", id, err)
	}
	if len(s) > login.MaxTokenBytes { // a bug: an issuer or audience configured too long
		return "", fmt.Errorf("sign token for user %d: %d bytes, over %d", id, len(s), login.MaxTokenBytes)
	}
	return s, nil
}

// Lifetime is how long the tokens Issue signs are valid.
func (i *Issuer) Lifetime() time.Duration { return i.config.Lifetime }

// Verifier checks access tokens against a set of public keys, offline.
type Verifier struct {
	keys   KeySet
	parser *jwt.Parser
}

// NewVerifier returns a Verifier that accepts ES256 tokens signed by a key of
// keys, issued by c.Issuer for c.Audience, within their validity (with
// login.ClockLeeway). now is the clock; nil means time.Now.
func NewVerifier(keys KeySet, c login.TokenConfig, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{
		keys: keys.PublicSet(),
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}),
			jwt.WithIssuer(c.Issuer),
			jwt.WithAudience(c.Audience),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(login.ClockLeeway),
			jwt.WithStrictDecoding(),
			jwt.WithTimeFunc(now),
		),
	}
}

// ErrInvalidToken is the error of every token Verify rejects, wrapped with
// the reason (for logs, never for clients).
var ErrInvalidToken = errors.New("invalid token")

// Verify checks token and returns whom it identifies. It rejects, with an
// error wrapping ErrInvalidToken: a token over login.MaxTokenBytes, any algorithm
// but ES256 (so alg none and HMAC keyed with a public key), an unknown kid,
// a bad signature, a wrong iss or aud, an expired or not yet valid token,
// and a sub or role that is not a Quire user id or role.
func (v *Verifier) Verify(token string) (Identity, error) {
	if len(token) > login.MaxTokenBytes {
		return Identity{}, fmt.Errorf("%w: over %d bytes", ErrInvalidToken, login.MaxTokenBytes)
	}
	var c Claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok { // extensions it must understand, and Quire understands none (RFC 7515 section 4.1.11)
			return nil, errors.New("a crit header")
		}
		kid, _ := t.Header["kid"].(string)
		if k := v.keys.Lookup(kid); k != nil {
			return k, nil
		}
		return nil, fmt.Errorf("unknown kid %q", kid)
	})
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	id, err := quire.ParseID(c.Subject)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: sub %q is not a user id", ErrInvalidToken, c.Subject)
	}
	if !c.Role.Valid() {
		return Identity{}, fmt.Errorf("%w: role %q", ErrInvalidToken, c.Role)
	}
	if c.NotBefore == nil || c.IssuedAt == nil {
		return Identity{}, fmt.Errorf("%w: nbf and iat are required", ErrInvalidToken)
	}
	if len(c.SessionID) > 64 {
		return Identity{}, fmt.Errorf("%w: sid of %d bytes", ErrInvalidToken, len(c.SessionID))
	}
	return Identity{UserID: id, Role: c.Role, SessionID: c.SessionID, Expires: c.ExpiresAt.Time}, nil
}
