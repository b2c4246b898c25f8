package auth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
)

func ids(s KeySet) []string {
	var out []string
	for _, k := range s.Keys {
		out = append(out, k.ID)
	}
	return out
}

func TestKeySetRoundTrip(t *testing.T) {
	set := KeySet{}.Rotate(newKey(t), testNow, time.Hour).Rotate(newKey(t), testNow, time.Hour)
	private, err := set.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKeySet(private)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ids(set), ids(back)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	for i, k := range back.Keys {
		if k.Private == nil || !k.Private.Equal(set.Keys[i].Private) {
			t.Errorf("key %d: private half lost", i)
		}
	}
	public, _ := set.PublicSet().MarshalJSON()
	if strings.Contains(string(public), `"d"`) {
		t.Errorf("the public set carries private halves: %s", public)
	}
	pub, err := ParseKeySet(public)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pub.Signing(testNow); ok {
		t.Error("a public set has a signing key")
	}
	if signing, _ := back.Signing(testNow.Add(PublishDelay)); signing.ID != set.Keys[0].ID {
		t.Errorf("signing key %s once published, want the newest %s", signing.ID, set.Keys[0].ID)
	}
	if signing, _ := back.Signing(testNow); signing.ID != set.Keys[1].ID {
		t.Errorf("signing key %s before the newest is published, want the one before, %s", signing.ID, set.Keys[1].ID)
	}
	if pub.Lookup(set.Keys[1].ID) == nil || pub.Lookup("nope") != nil {
		t.Error("Lookup")
	}
}

func TestRotateKeepsMaxKeys(t *testing.T) {
	set := KeySet{}
	var made []string
	for range login.MaxKeys + 2 {
		k := newKey(t)
		made = append([]string{k.ID}, made...)
		set = set.Rotate(k, testNow, time.Hour)
	}
	if diff := cmp.Diff(made[:login.MaxKeys], ids(set)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

// A rotation keeps the key before the new one, however old, and each older
// key while the key that replaced it is younger than PublishDelay +
// KeyMaxStale + the tokens' lifetime.
func TestRotateKeepsWhatTokensNeed(t *testing.T) {
	lifetime := 15 * time.Minute
	retain := PublishDelay + KeyMaxStale + lifetime
	at := func(d time.Duration) Key {
		k, err := GenerateKey(testNow.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ancient := at(-10 * retain)
	for _, c := range []struct {
		name string
		set  KeySet
		want int
	}{
		{"the key before", KeySet{Keys: []Key{ancient}}, 2},
		{"a key replaced retain ago", KeySet{Keys: []Key{at(-retain), ancient}}, 2},
		{"a key replaced less than retain ago", KeySet{Keys: []Key{at(-retain + time.Second), ancient}}, 3},
	} {
		if got := c.set.Rotate(at(0), testNow, lifetime); len(got.Keys) != c.want {
			t.Errorf("%s: kept %d keys, want %d", c.name, len(got.Keys), c.want)
		}
	}
}

func TestParseKeySetRejects(t *testing.T) {
	k := newKey(t)
	good, _ := KeySet{Keys: []Key{k}}.MarshalJSON()
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(good, &set); err != nil {
		t.Fatal(err)
	}
	with := func(change func(map[string]any)) string {
		m := map[string]any{}
		for key, v := range set.Keys[0] {
			m[key] = v
		}
		change(m)
		b, _ := json.Marshal(map[string]any{"keys": []any{m}})
		return string(b)
	}
	one, _ := json.Marshal(set.Keys[0])
	twice := `{"keys":[` + string(one) + "," + string(one) + `]}`
	otherD := newKey(t)
	od, _ := otherD.Private.Bytes()
	for name, data := range map[string]string{
		"not JSON":            "{",
		"no keys":             `{"keys":[]}`,
		"kty RSA":             with(func(m map[string]any) { m["kty"] = "RSA" }),
		"crv P-384":           with(func(m map[string]any) { m["crv"] = "P-384" }),
		"alg HS256":           with(func(m map[string]any) { m["alg"] = "HS256" }),
		"no kid":              with(func(m map[string]any) { delete(m, "kid") }),
		"x too short":         with(func(m map[string]any) { m["x"] = b64(make([]byte, 31)) }),
		"x padded":            with(func(m map[string]any) { m["x"] = m["x"].(string) + "=" }),
		"y not base64url":     with(func(m map[string]any) { m["y"] = "!!" }),
		"off the curve":       with(func(m map[string]any) { m["y"] = b64(make([]byte, 32)) }),
		"d of another key":    with(func(m map[string]any) { m["d"] = b64(od) }),
		"d zero":              with(func(m map[string]any) { m["d"] = b64(make([]byte, 32)) }),
		"repeated kid":        twice,
		"kid a number":        with(func(m map[string]any) { m["kid"] = 7 }),
		"kid too long":        with(func(m map[string]any) { m["kid"] = m["kid"].(string) + "x" }),
		"KTY in capitals":     with(func(m map[string]any) { m["KTY"] = m["kty"]; delete(m, "kty") }),
		"a key not an object": `{"keys":["EC"]}`,
		"keys not an array":   `{"keys":{}}`,
	} {
		if _, err := ParseKeySet([]byte(data)); err == nil {
			t.Errorf("%s: accepted %s", name, data)
		}
	}
	if _, err := ParseKeySet(good); err != nil {
		t.Errorf("the good set: %v", err)
	}
	if len(k.ID) != login.MaxKeyIDLen {
		t.Errorf("a new key's id %q is not of login.MaxKeyIDLen, %d", k.ID, login.MaxKeyIDLen)
	}
}

// FuzzParseKeySet: nothing panics, and a set that parses marshals and
// parses back to the same keys.
func FuzzParseKeySet(f *testing.F) {
	good, _ := KeySet{Keys: []Key{newKey(f)}}.MarshalJSON()
	public, _ := KeySet{Keys: []Key{newKey(f)}}.PublicSet().MarshalJSON()
	for _, s := range []string{string(good), string(public), `{"keys":[]}`, `{"keys":[{"kty":"EC"}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		set, err := ParseKeySet([]byte(data))
		if err != nil {
			return
		}
		b, err := set.MarshalJSON()
		if err != nil {
			t.Fatalf("marshal a parsed set: %v", err)
		}
		back, err := ParseKeySet(b)
		if err != nil || !cmp.Equal(ids(set), ids(back)) {
			t.Fatalf("round trip: %v, %v", ids(back), err)
		}
	})
}

// The keys read in the background as init ends: nothing is read until the
// read starts, a login that comes before then starts it, a login that
// comes while it lasts waits for it rather than reading again, one whose
// deadline ends first is 503, and the start that init's end makes then
// reads nothing more.
func TestLoadInBackground(t *testing.T) {
	key, err := GenerateKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var reads atomic.Int32
	h := &KeyRing{Tokens: testConfig, LoadKeys: func(ctx context.Context) (KeySet, error) {
		reads.Add(1)
		<-release
		return KeySet{Keys: []Key{key}}, nil
	}}
	start := h.LoadInBackground(time.Minute)
	if n := reads.Load(); n != 0 {
		t.Fatalf("the keys were read %d times before the read started", n)
	}

	early, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := h.current(early); quire.ErrorCode(err) != quire.EUNAVAILABLE {
		t.Errorf("a login whose deadline ends while the keys are read: %v, want EUNAVAILABLE", err)
	}
	got := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := h.current(t.Context())
			if err == nil && s == nil {
				err = errors.New("no signer")
			}
			got <- err
		}()
	}
	close(release)
	for range 2 {
		if err := <-got; err != nil {
			t.Errorf("a login that waited for the keys: %v", err)
		}
	}
	start() // as init ends, after the first login
	if n := reads.Load(); n != 1 {
		t.Errorf("the keys were read %d times, want once: the logins waited for the read init started", n)
	}
}
