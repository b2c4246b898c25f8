package argon2id

import (
	"strings"
	"testing"
)

func TestHashAndMatch(t *testing.T) {
	h := Hash("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("Hash = %q, want an argon2id PHC string with the OWASP cost", h)
	}
	if strings.Contains(h, "correct horse") {
		t.Errorf("Hash = %q holds the password", h)
	}
	if !Match(h, "correct horse battery") {
		t.Error("the password does not match its hash")
	}
	for _, wrong := range []string{"", "correct horse batter", "correct horse battery ", "Correct horse battery"} {
		if Match(h, wrong) {
			t.Errorf("%q matches the hash of another password", wrong)
		}
	}
	if h2 := Hash("correct horse battery"); h2 == h || !Match(h2, "correct horse battery") {
		t.Errorf("two hashes of one password: %q and %q; want different salts, both matching", h, h2)
	}
}

func TestMatchRefuses(t *testing.T) {
	good := Hash("password1")
	fields := strings.Split(good, "$")
	with := func(i int, v string) string {
		f := append([]string(nil), fields...)
		f[i] = v
		return strings.Join(f, "$")
	}
	for name, hash := range map[string]string{
		"no user":          "",
		"the decoy":        Recommended.decoy(),
		"bcrypt":           "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
		"argon2i":          with(1, "argon2i"),
		"another version":  with(2, "v=16"),
		"memory too large": with(3, "m=4194304,t=2,p=1"),
		"too many passes":  with(3, "m=19456,t=1000,p=1"),
		"no lanes":         with(3, "m=19456,t=2,p=0"),
		"bad parameters":   with(3, "m=x"),
		"short salt":       with(4, "c2FsdA"),
		"salt not base64":  with(4, "!!!!!!!!!!!!"),
		"short key":        with(5, "a2V5"),
		"extra field":      good + "$x",
		"plain text":       "password1",
	} {
		if Match(hash, "password1") {
			t.Errorf("%s: %q matches", name, hash)
		}
	}
	// The decoy matches no password, not even the empty one.
	if Match("", "") {
		t.Error("an empty password matches an empty hash")
	}
}

// A hash of one cost matches under another: each reads the hash's own.
// The least cost still hashes with a salt of its own.
func TestCosts(t *testing.T) {
	cheap := MinCost.Hash("password1")
	if !strings.HasPrefix(cheap, "$argon2id$v=19$m=8,t=1,p=1$") {
		t.Errorf("MinCost.Hash = %q, want an argon2id PHC string at m=8,t=1", cheap)
	}
	if !Match(cheap, "password1") || Match(cheap, "password2") || !MinCost.Match(Hash("password1"), "password1") {
		t.Error("a hash does not match its password, or matches another, under another cost")
	}
	if MinCost.Hash("password1") == cheap {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, c := range []Cost{Recommended, MinCost} {
		if _, err := parse(c.decoy()); err != nil || c.Match("", "") {
			t.Errorf("%+v: the decoy %q does not parse (%v), or matches", c, c.decoy(), err)
		}
	}
}

// FuzzParse: parse never panics, and what it accepts stays within the cost
// bounds that keep a login short.
func FuzzParse(f *testing.F) {
	f.Add(Hash("password1"))
	f.Add(Recommended.decoy())
	f.Add("$argon2id$v=19$m=1,t=1,p=1$$")
	f.Add("$argon2id$v=19$m=-1,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parse(s)
		if err != nil {
			return
		}
		if p.memory > 256*1024 || p.passes < 1 || p.passes > 10 || p.lanes < 1 || p.lanes > 16 ||
			p.memory < 8*uint32(p.lanes) || len(p.salt) < 8 || len(p.key) < 16 || len(p.key) > 64 {
			t.Fatalf("parse(%q) accepted %+v", s, p)
		}
	})
}
