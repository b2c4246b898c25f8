// Package auth is Quire's authentication: ES256 signing keys and their JSON
// Web Key sets, the access tokens login issues and the authorizer verifies,
// the authorizer's IAM policies, and the login and JWKS handlers.
package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
)

// Key is one P-256 key named by its key id (the token header's kid). Private
// is nil in a set of public keys.
type Key struct {
	ID      string
	Public  *ecdsa.PublicKey
	Private *ecdsa.PrivateKey
}

// KeySet is an ordered set of keys, newest first: a published private key
// signs (see Signing), and every key verifies. Rotation adds a key at the
// front and keeps the previous ones while tokens they signed may live.
type KeySet struct {
	Keys []Key
}

// The timing of a rotation, from the secret's write by the keys function.
// The same deployment then gives the authorizer the new public set, within
// minutes; a login instance reads the secret again KeyRefresh after its
// last read (and keeps signing with what it read, for at most KeyMaxStale,
// while the secret cannot be read). So:
//
//   - a new key signs only once it is PublishDelay old, when every
//     authorizer knows it (until then the key before it signs);
//   - a key stays in the set while a token it signed may still be live:
//     until its successor is PublishDelay + KeyMaxStale + the token
//     lifetime old (see Rotate);
//
// and no login instance signs with a key the authorizer no longer has, at
// any pace of rotation up to login.MaxKeys keys in that window.
const (
	PublishDelay = 5 * time.Minute
	KeyRefresh   = time.Minute
	KeyMaxStale  = 5 * time.Minute
)

// keyTime is the layout of the creation time that starts a key's id.
const keyTime = "20060102T150405Z"

// Created returns when k was made, from its id; the zero time for an id
// GenerateKey did not make, which counts as long ago.
func (k Key) Created() time.Time {
	if len(k.ID) < len(keyTime) {
		return time.Time{}
	}
	t, err := time.Parse(keyTime, k.ID[:len(keyTime)])
	if err != nil {
		return time.Time{}
	}
	return t
}

// GenerateKey returns a new private key whose id says when it was made.
func GenerateKey(now time.Time) (Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Key{}, fmt.Errorf("generate signing key: %w", err)
	}
	var suffix [4]byte
	rand.Read(suffix[:])
	id := now.UTC().Format(keyTime) + "-" + base64.RawURLEncoding.EncodeToString(suffix[:])
	return Key{ID: id, Public: &priv.PublicKey, Private: priv}, nil
}

// Rotate returns a set with k, made at now, in front of s's keys. It keeps
// the key before k, which signs until k is published, and each older key
// while the key that replaced it is younger than PublishDelay + KeyMaxStale
// + lifetime (the tokens' lifetime): the longest a token the older key
// signed may live. It keeps at most login.MaxKeys.
func (s KeySet) Rotate(k Key, now time.Time, lifetime time.Duration) KeySet {
	keys := []Key{k}
	retain := PublishDelay + KeyMaxStale + lifetime
	for i, old := range s.Keys {
		successor := k
		if i > 0 {
			successor = s.Keys[i-1]
		}
		if len(keys) == login.MaxKeys || i > 0 && now.Sub(successor.Created()) >= retain {
			break
		}
		keys = append(keys, old)
	}
	return KeySet{Keys: keys}
}

// Signing returns the key that signs at now: the newest private key that
// has been published for PublishDelay, else the oldest private key (the
// one published longest); false when the set has none.
func (s KeySet) Signing(now time.Time) (Key, bool) {
	var oldest Key
	for _, k := range s.Keys {
		if k.Private == nil {
			continue
		}
		if now.Sub(k.Created()) >= PublishDelay {
			return k, true
		}
		oldest = k
	}
	return oldest, oldest.Private != nil
}

// Lookup returns the public key named id, or nil.
func (s KeySet) Lookup(id string) *ecdsa.PublicKey {
	for _, k := range s.Keys {
		if k.ID == id {
			return k.Public
		}
	}
	return nil
}

// PublicSet returns s without its private halves.
func (s KeySet) PublicSet() KeySet {
	out := KeySet{Keys: make([]Key, len(s.Keys))}
	for i, k := range s.Keys {
		out.Keys[i] = Key{ID: k.ID, Public: k.Public}
	}
	return out
}

// jwk is a P-256 JSON Web Key (RFC 7517, 7518 section 6.2).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Kid string `json:"kid"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d,omitempty"`
}

// MarshalJSON writes s as a JWK Set, private halves included when present:
// call PublicSet first to publish it.
func (s KeySet) MarshalJSON() ([]byte, error) {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(s.Keys))}
	for _, k := range s.Keys {
		point, err := k.Public.Bytes() // 0x04 || x || y
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.ID, err)
		}
		j := jwk{Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "sig", Kid: k.ID,
			X: b64(point[1:33]), Y: b64(point[33:])}
		if k.Private != nil {
			d, err := k.Private.Bytes()
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", k.ID, err)
			}
			j.D = b64(d)
		}
		set.Keys = append(set.Keys, j)
	}
	return json.Marshal(set)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// ParseKeySet reads a JWK Set of P-256 keys, public or private, in order. It
// returns an error for an empty set, a key of another type or curve, a point
// off the curve, a private half that does not match its public one, and a key
// id that is missing, repeated or longer than login.MaxKeyIDLen.
func ParseKeySet(data []byte) (KeySet, error) {
	// Members are read from maps, not decoded into jwk: encoding/json's
	// analysis of a struct type by reflection, on its first use, would cost
	// the cold starts of login and the authorizer, which parse their keys at
	// init, about 0.04 ms.
	var set map[string]any
	if err := json.Unmarshal(data, &set); err != nil {
		return KeySet{}, fmt.Errorf("parse key set: %w", err)
	}
	keys, _ := set["keys"].([]any)
	if len(keys) == 0 {
		return KeySet{}, errors.New("parse key set: no keys")
	}
	var s KeySet
	for i, v := range keys {
		m, _ := v.(map[string]any)
		k, err := jwkOf(m).key()
		if err != nil {
			return KeySet{}, fmt.Errorf("parse key set: key %d: %w", i, err)
		}
		if s.Lookup(k.ID) != nil {
			return KeySet{}, fmt.Errorf("parse key set: key id %q repeats", k.ID)
		}
		s.Keys = append(s.Keys, k)
	}
	return s, nil
}

// jwkOf returns the members of a decoded JWK; a member that is not a string
// reads as missing, which key refuses.
func jwkOf(m map[string]any) jwk {
	str := func(name string) string { v, _ := m[name].(string); return v }
	return jwk{Kty: str("kty"), Crv: str("crv"), Alg: str("alg"), Use: str("use"), Kid: str("kid"), X: str("x"), Y: str("y"), D: str("d")}
}

func (j jwk) key() (Key, error) {
	if j.Kty != "EC" || j.Crv != "P-256" {
		return Key{}, fmt.Errorf("want an EC P-256 key, got kty %q crv %q", j.Kty, j.Crv)
	}
	if j.Alg != "" && j.Alg != "ES256" {
		return Key{}, fmt.Errorf("want alg ES256, got %q", j.Alg)
	}
	if j.Kid == "" || len(j.Kid) > login.MaxKeyIDLen {
		return Key{}, fmt.Errorf("want a kid of 1 to %d characters, got %q", login.MaxKeyIDLen, j.Kid)
	}
	x, errX := coordinate(j.X)
	y, errY := coordinate(j.Y)
	if err := errors.Join(errX, errY); err != nil {
		return Key{}, err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return Key{}, err
	}
	k := Key{ID: j.Kid, Public: pub}
	if j.D != "" {
		d, err := coordinate(j.D)
		if err != nil {
			return Key{}, err
		}
		priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
		if err != nil {
			return Key{}, err
		}
		if !priv.PublicKey.Equal(pub) {
			return Key{}, errors.New("d does not match x and y")
		}
		k.Private, k.Public = priv, &priv.PublicKey
	}
	return k, nil
}

// coordinate decodes a base64url field of exactly 32 bytes.
func coordinate(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, errors.New("want 32 bytes of base64url in x, y and d")
	}
	return b, nil
}

// KeyRing holds the keys tokens are signed with: set at init (SetKeys),
// or read from a store (LoadKeys) and read again as they rotate.
type KeyRing struct {
	// Tokens says whom the tokens are for and how long they live.
	Tokens login.TokenConfig
	// LoadKeys, when set, reads the key set for Reload: the ring then reads
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

// clock is the time by the ring's clock: time.Now, or the tests' now.
func (h *KeyRing) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// Ready returns the time by the ring's clock once the ring can sign:
// EUNAVAILABLE while its keys are not read (see current).
func (h *KeyRing) Ready(ctx context.Context) (time.Time, error) {
	_, err := h.current(ctx)
	return h.clock(), err
}

// AccessToken returns an access token of user with role in the session
// sid, signed with the current key, and how long it lives.
func (h *KeyRing) AccessToken(ctx context.Context, user quire.ID, role quire.Role, sid string) (string, time.Duration, error) {
	s, err := h.current(ctx)
	if err != nil {
		return "", 0, err
	}
	token, err := s.issuer.IssueInSession(user, role, sid)
	return token, h.Tokens.Lifetime, err
}

// JWKS returns the public halves of the ring's keys, as published: a JWK
// Set.
func (h *KeyRing) JWKS(ctx context.Context) (json.RawMessage, error) {
	s, err := h.current(ctx)
	if err != nil {
		return nil, err
	}
	return s.keys.MarshalJSON()
}

// signer is the keys login signs with, as the handlers hold them.
type signer struct {
	issuer *Issuer
	keys   KeySet    // public halves, as published
	read   time.Time // when the keys were set
}

// SetKeys makes keys' signing key (see KeySet.Signing) sign the tokens
// login issues from now on, and publishes their public halves. It returns an
// error when keys has no private key.
func (h *KeyRing) SetKeys(keys KeySet) error {
	iss, err := NewIssuer(keys, h.Tokens)
	if err != nil {
		return err
	}
	now := h.clock()
	if h.now != nil {
		iss.Now = h.now
	}
	iss.key, _ = keys.Signing(now)
	h.signer.Store(&signer{issuer: iss, keys: keys.PublicSet(), read: now})
	return nil
}

// Reload sets the keys LoadKeys reads.
func (h *KeyRing) Reload(ctx context.Context) error {
	if h.LoadKeys == nil {
		return errors.New("auth: no key source")
	}
	keys, err := h.LoadKeys(ctx)
	if err != nil {
		return err
	}
	return h.SetKeys(keys)
}

// LoadInBackground prepares a read of the keys with LoadKeys, for at most
// timeout, in the background, and returns what starts it. A function's
// main hands that to awsenv.WarmUp, so that the read (the connection to
// the secret's store and its TLS handshake included) begins as init ends:
// begun beside init, it lengthened init past its budget. A login
// that comes before the read has started starts it; one that comes before
// it has ended waits for it rather than reading again. Call it before the
// handlers serve.
func (h *KeyRing) LoadInBackground(timeout time.Duration) (start func()) {
	done := make(chan struct{})
	h.loading = done
	h.startLoading = sync.OnceFunc(func() {
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if err := h.Reload(ctx); err != nil {
				slog.Warn("no signing keys yet", "err", err)
			}
		}()
	})
	return h.startLoading
}

// current returns the signer, reading the keys again when there is none
// or, with LoadKeys, when they were read KeyRefresh ago or more. When they
// cannot be read, the keys read last serve until they are KeyMaxStale old,
// and login is 503 after that.
func (h *KeyRing) current(ctx context.Context) (*signer, error) {
	if h.loading != nil {
		h.startLoading()
		select {
		case <-h.loading:
		case <-ctx.Done():
			return nil, &quire.Error{Code: quire.EUNAVAILABLE, Message: "The signing keys are not read yet.", Err: ctx.Err()}
		}
	}
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
