package login

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/quireapi/quire/internal/quire"
)

// testNow is when the sessions of these tests start.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestNewSession(t *testing.T) {
	s, token := NewSession(42, 3, testNow)
	user, id, hash, ok := ParseRefreshToken(token)
	if !ok || user != 42 || id != s.ID || hash != s.TokenHash || len(token) != RefreshTokenLen {
		t.Fatalf("ParseRefreshToken(%q) = %d, %s, %s, %v; want the session %+v", token, user, id, hash, ok, s)
	}
	if s.Epoch != 3 || !s.IdleUntil.Equal(testNow.Add(RefreshIdle)) || !s.Ends.Equal(testNow.Add(SessionMax)) ||
		!s.Expiry().Equal(s.IdleUntil) {
		t.Errorf("NewSession = %+v", s)
	}
	if strings.Contains(s.TokenHash, token) || len(s.TokenHash) != 64 {
		t.Errorf("the stored hash %q is not a SHA-256 of the token", s.TokenHash)
	}
	// The next token of the same session keeps its id, not its secret.
	next, nextID, nextHash := NewRefreshToken(42, s.ID)
	if nextID != s.ID || next == token || nextHash == s.TokenHash || next[:32] != token[:32] {
		t.Errorf("NewRefreshToken(42, %s) = %s, %s, %s", s.ID, next, nextID, nextHash)
	}
	if again, _ := SessionOf(token, 3, testNow); again != s {
		t.Errorf("SessionOf = %+v, want %+v", again, s)
	}
	if _, ok := SessionOf(token+"A", 0, testNow); ok {
		t.Error("SessionOf took a token of 76 characters")
	}
}

// FuzzParseRefreshToken: no string panics ParseRefreshToken, and whatever
// it accepts is the canonical base64url of 56 bytes whose first 24 are the
// user and the session it names.
func FuzzParseRefreshToken(f *testing.F) {
	_, token := NewSession(7, 0, testNow)
	for _, s := range []string{
		token, "", "AAAA", token + "=", token[:74], strings.Repeat("A", RefreshTokenLen), strings.Repeat("_", RefreshTokenLen),
		"AAAAAAAAAAJkZW1vLXNlc3Npb24tZ3JhZGVtbyByZWZyZXNoIHRva2VuIG9mIEdyYWNlIDAwMDE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		user, session, hash, ok := ParseRefreshToken(token)
		if !ok {
			return
		}
		b, err := base64.RawURLEncoding.Strict().DecodeString(token)
		if err != nil || len(b) != refreshTokenBytes || base64.RawURLEncoding.EncodeToString(b) != token {
			t.Fatalf("accepted %q, which is not the canonical form of %d bytes", token, refreshTokenBytes)
		}
		if user == 0 || user > quire.MaxID {
			t.Fatalf("accepted user %d", user)
		}
		var head [24]byte
		binary.BigEndian.PutUint64(head[:8], uint64(user))
		if n, err := hex.Decode(head[8:], []byte(session)); err != nil || n != 16 {
			t.Fatalf("session %q is not 16 bytes in hex", session)
		}
		if !bytes.Equal(head[:], b[:24]) {
			t.Fatalf("%q names user %d and session %s, which encode to %x, not %x", token, user, session, head, b[:24])
		}
		if hash != hashToken(token) {
			t.Fatalf("hash %s of %q", hash, token)
		}
		if s, ok := SessionOf(token, 0, time.Time{}); !ok || s.UserID != user || s.ID != session {
			t.Fatalf("SessionOf(%q) = %+v, %v", token, s, ok)
		}
	})
}
