package auth

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
)

var (
	testNow    = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	testConfig = login.TokenConfig{Issuer: "quire/Test", Audience: login.DefaultAudience, Lifetime: 15 * time.Minute}
)

func newKey(t testing.TB) Key {
	t.Helper()
	k, err := GenerateKey(testNow)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// validClaims are the claims Issue writes for user 7, a customer.
func validClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss": testConfig.Issuer, "aud": []string{testConfig.Audience}, "sub": "7", "role": "customer",
		"iat": testNow.Unix(), "nbf": testNow.Unix(), "exp": testNow.Add(15 * time.Minute).Unix(),
	}
}

// sign signs claims with k (ES256) under kid.
func sign(t *testing.T, k Key, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// critical signs claims with k as sign does, its header naming a critical
// extension (RFC 7515 section 4.1.11).
func critical(t *testing.T, k Key, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"], tok.Header["crit"], tok.Header["exp-ext"] = k.ID, []string{"exp-ext"}, true
	s, err := tok.SignedString(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seg(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestIssueAndVerify(t *testing.T) {
	k := newKey(t)
	iss, err := NewIssuer(KeySet{Keys: []Key{k}}, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	iss.Now = func() time.Time { return testNow }
	token, err := iss.Issue(7, quire.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewVerifier(KeySet{Keys: []Key{k}}, testConfig, func() time.Time { return testNow.Add(time.Minute) }).Verify(token)
	want := Identity{UserID: 7, Role: quire.RoleAdmin, Expires: testNow.Add(15 * time.Minute)}
	if err != nil || got.UserID != want.UserID || got.Role != want.Role || !got.Expires.Equal(want.Expires) {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, want)
	}
	var header map[string]any
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err := json.Unmarshal(b, &header); err != nil {
		t.Fatal(err)
	}
	if header["alg"] != "ES256" || header["kid"] != k.ID {
		t.Errorf("header %v", header)
	}
	if _, err := NewIssuer(KeySet{Keys: []Key{{ID: k.ID, Public: k.Public}}}, testConfig); err == nil {
		t.Error("NewIssuer accepted a set without a private key")
	}
	long := testConfig
	long.Issuer = strings.Repeat("q", login.MaxTokenBytes)
	if iss, err := NewIssuer(KeySet{Keys: []Key{k}}, long); err != nil {
		t.Fatal(err)
	} else if token, err := iss.Issue(7, quire.RoleAdmin); err == nil {
		t.Errorf("issued a token of %d bytes, over login.MaxTokenBytes, which no verifier takes", len(token))
	}
}

// TestHostileTokens: every token here must be refused.
func TestHostileTokens(t *testing.T) {
	k, other := newKey(t), newKey(t)
	keys := KeySet{Keys: []Key{k}}
	v := NewVerifier(keys, testConfig, func() time.Time { return testNow })
	valid := sign(t, k, k.ID, validClaims())
	parts := strings.Split(valid, ".")
	with := func(change func(jwt.MapClaims)) string {
		c := validClaims()
		change(c)
		return sign(t, k, k.ID, c)
	}
	hmac := func(secret []byte) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, validClaims())
		tok.Header["kid"] = k.ID
		s, err := tok.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	point, _ := k.Public.Bytes()
	der, _ := x509.MarshalPKIXPublicKey(k.Public)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	jwkJSON, _ := KeySet{Keys: []Key{{ID: k.ID, Public: k.Public}}}.MarshalJSON()
	flipped := []byte(parts[2])
	flipped[10] ^= 1
	adminPayload := validClaims()
	adminPayload["role"] = "admin"
	nonCanonical := parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-1] + string(parts[2][len(parts[2])-1]^1)

	for name, token := range map[string]string{
		"alg none":                      seg(map[string]string{"alg": "none", "typ": "JWT"}) + "." + parts[1] + ".",
		"alg none, no dot":              seg(map[string]string{"alg": "none"}) + "." + parts[1],
		"alg none with a signature":     seg(map[string]string{"alg": "none", "kid": k.ID}) + "." + parts[1] + "." + parts[2],
		"HS256 keyed with the point":    hmac(point),
		"HS256 keyed with the PEM":      hmac(pemKey),
		"HS256 keyed with the JWK":      hmac(jwkJSON),
		"RS256 header":                  seg(map[string]string{"alg": "RS256", "kid": k.ID}) + "." + parts[1] + "." + parts[2],
		"ES384 header":                  seg(map[string]string{"alg": "ES384", "kid": k.ID}) + "." + parts[1] + "." + parts[2],
		"unknown kid":                   sign(t, k, "nobody", validClaims()),
		"a crit header":                 critical(t, k, validClaims()),
		"no kid":                        sign(t, k, "", validClaims()),
		"another key with the same kid": sign(t, other, k.ID, validClaims()),
		"tampered payload":              parts[0] + "." + seg(adminPayload) + "." + parts[2],
		"tampered signature":            parts[0] + "." + parts[1] + "." + string(flipped),
		"truncated signature":           parts[0] + "." + parts[1] + "." + parts[2][:40],
		"no signature":                  parts[0] + "." + parts[1] + ".",
		"non-canonical base64":          nonCanonical,
		"padded base64":                 parts[0] + "." + parts[1] + "=." + parts[2],
		"expired beyond the leeway":     with(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-login.ClockLeeway - time.Second).Unix() }),
		"not valid yet":                 with(func(c jwt.MapClaims) { c["nbf"] = testNow.Add(login.ClockLeeway + time.Minute).Unix() }),
		"issued in the future":          with(func(c jwt.MapClaims) { c["iat"] = testNow.Add(login.ClockLeeway + time.Minute).Unix() }),
		"no exp":                        with(func(c jwt.MapClaims) { delete(c, "exp") }),
		"no nbf":                        with(func(c jwt.MapClaims) { delete(c, "nbf") }),
		"no iat":                        with(func(c jwt.MapClaims) { delete(c, "iat") }),
		"wrong iss":                     with(func(c jwt.MapClaims) { c["iss"] = "quire/Other" }),
		"no iss":                        with(func(c jwt.MapClaims) { delete(c, "iss") }),
		"wrong aud":                     with(func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} }),
		"no aud":                        with(func(c jwt.MapClaims) { delete(c, "aud") }),
		"sub 0":                         with(func(c jwt.MapClaims) { c["sub"] = "0" }),
		"sub with a leading zero":       with(func(c jwt.MapClaims) { c["sub"] = "07" }),
		"sub not a number":              with(func(c jwt.MapClaims) { c["sub"] = "abc" }),
		"sub negative":                  with(func(c jwt.MapClaims) { c["sub"] = "-1" }),
		"sub beyond 2^53-1":             with(func(c jwt.MapClaims) { c["sub"] = "9007199254740992" }),
		"no sub":                        with(func(c jwt.MapClaims) { delete(c, "sub") }),
		"role root":                     with(func(c jwt.MapClaims) { c["role"] = "root" }),
		"no role":                       with(func(c jwt.MapClaims) { delete(c, "role") }),
		"over the size bound":           with(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", login.MaxTokenBytes) }),
		"empty":                         "",
		"two segments":                  "a.b",
		"four segments":                 valid + ".x",
		"garbage":                       "not a token at all",
		"header not JSON":               base64.RawURLEncoding.EncodeToString([]byte("{")) + "." + parts[1] + "." + parts[2],
		"exp as a string":               with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }),
	} {
		t.Run(name, func(t *testing.T) {
			id, err := v.Verify(token)
			if err == nil || !errors.Is(err, ErrInvalidToken) {
				t.Errorf("Verify accepted it: %+v, %v", id, err)
			}
		})
	}
	if _, err := v.Verify(valid); err != nil {
		t.Errorf("the untampered token: %v", err)
	}
	// Within the leeway, a just-expired token still passes.
	late := with(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-login.ClockLeeway / 2).Unix() })
	if _, err := v.Verify(late); err != nil {
		t.Errorf("expired within the leeway: %v", err)
	}
}

// TestRotation: after a rotation the new key signs, and tokens of the keys
// kept still verify; a key dropped from the set no longer verifies.
func TestRotation(t *testing.T) {
	set := KeySet{}
	var tokens []string
	for range login.MaxKeys + 1 {
		set = set.Rotate(newKey(t), testNow, testConfig.Lifetime)
		iss, err := NewIssuer(set, testConfig)
		if err != nil {
			t.Fatal(err)
		}
		iss.Now = func() time.Time { return testNow }
		tok, _ := iss.Issue(7, quire.RoleCustomer)
		tokens = append(tokens, tok)
	}
	v := NewVerifier(set.PublicSet(), testConfig, func() time.Time { return testNow })
	for i, tok := range tokens {
		_, err := v.Verify(tok)
		if dropped := i == 0; (err != nil) != dropped {
			t.Errorf("token of key %d: err %v (dropped: %v)", i, err, dropped)
		}
	}
}

// FuzzVerify: no string panics Verify, and none but the issued token (or
// one that decodes to the same bytes, which strict decoding rules out) is
// accepted.
func FuzzVerify(f *testing.F) {
	k := newKey(f)
	iss, _ := NewIssuer(KeySet{Keys: []Key{k}}, testConfig)
	iss.Now = func() time.Time { return testNow }
	valid, _ := iss.Issue(7, quire.RoleCustomer)
	v := NewVerifier(KeySet{Keys: []Key{k}}, testConfig, func() time.Time { return testNow })
	for _, s := range []string{valid, "", "a.b.c", valid + "x", strings.Replace(valid, ".", "..", 1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		if _, err := v.Verify(token); err == nil && token != valid {
			t.Fatalf("accepted %q", token)
		}
	})
}
