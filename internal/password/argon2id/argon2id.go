// Package argon2id hashes and checks Quire's passwords with Argon2id (RFC
// 9106), with OWASP's recommended minimum cost: 19 MiB of memory, two
// passes, one lane. Hashes are PHC strings that carry their own parameters,
// so the cost can rise later without invalidating stored hashes.
package argon2id

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/quireapi/quire/internal/password"
)

// Cost is the work of a new hash: memory in KiB and passes, with one lane.
// A hash carries its cost, and Match reads it from there: a hash of any cost
// matches under any Cost.
type Cost struct{ MemoryKiB, Passes uint32 }

var (
	// Recommended is OWASP's recommended minimum: 19 MiB, two passes.
	Recommended = Cost{MemoryKiB: 19 * 1024, Passes: 2}
	// MinCost is the least Argon2id allows, 1/4864 of Recommended's work:
	// for tests, whose passwords guard nothing.
	MinCost = Cost{MemoryKiB: 8, Passes: 1}
)

// Hasher is Hash and Match at the recommended cost, as a password.Hasher.
var Hasher password.Hasher = Recommended

const (
	lanes   = 1
	saltLen = 16
	keyLen  = 32
)

// Hash returns the PHC string of pw at the recommended cost.
func Hash(pw string) string { return Recommended.Hash(pw) }

// Match reports whether pw matches the PHC string hash, an empty hash
// costing the recommended work (see Cost.Match).
func Match(hash, pw string) bool { return Recommended.Match(hash, pw) }

// Hash returns the PHC string of pw under a new random salt, at cost c.
func (c Cost) Hash(pw string) string {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, c.Passes, c.MemoryKiB, lanes, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, c.MemoryKiB, c.Passes, lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

var b64 = base64.RawStdEncoding

// decoy is the hash Match checks a password against when there is no
// stored hash (an unknown email), so that the answer takes as long as for a
// wrong password: c's cost. No password matches it: its key is not derived
// from one.
func (c Cost) decoy() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$cXVpcmUtZGVjb3ktc2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		argon2.Version, c.MemoryKiB, c.Passes, lanes)
}

// Match reports whether pw matches the PHC string hash, at the hash's own
// cost. An empty hash (no such user) costs c's work and never matches. A
// hash that does not parse never matches.
func (c Cost) Match(hash, pw string) bool {
	stored := hash
	if stored == "" {
		stored = c.decoy()
	}
	p, err := parse(stored)
	if err != nil {
		return false
	}
	key := argon2.IDKey([]byte(pw), p.salt, p.passes, p.memory, p.lanes, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1 && hash != ""
}

type params struct {
	memory, passes uint32
	lanes          uint8
	salt, key      []byte
}

// parse reads "$argon2id$v=19$m=..,t=..,p=..$salt$key", with bounds on the
// cost so that a corrupted hash cannot make a login take minutes.
func parse(s string) (params, error) {
	f := strings.Split(s, "$")
	if len(f) != 6 || f[0] != "" || f[1] != "argon2id" || f[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return params{}, errors.New("argon2id: not an argon2id hash")
	}
	var p params
	if _, err := fmt.Sscanf(f[3], "m=%d,t=%d,p=%d", &p.memory, &p.passes, &p.lanes); err != nil {
		return params{}, fmt.Errorf("argon2id: parameters: %w", err)
	}
	if p.memory < 8*uint32(p.lanes) || p.memory > 256*1024 || p.passes < 1 || p.passes > 10 || p.lanes < 1 || p.lanes > 16 {
		return params{}, errors.New("argon2id: parameters out of bounds")
	}
	var err1, err2 error
	p.salt, err1 = b64.DecodeString(f[4])
	p.key, err2 = b64.DecodeString(f[5])
	if err := errors.Join(err1, err2); err != nil || len(p.salt) < 8 || len(p.key) < 16 || len(p.key) > 64 {
		return params{}, errors.New("argon2id: bad salt or key")
	}
	return p, nil
}
