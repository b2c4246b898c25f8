package auth

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ids(s KeySet) []string {
	var out []string
	for _, k := range s.Keys {
		out = append(out, k.ID)
	}
	return out
}

func TestKeySetRoundTrip(t *testing.T) {
	set := KeySet{}.Rotate(newKey(t)).Rotate(newKey(t))
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
	if _, ok := pub.Signing(); ok {
		t.Error("a public set has a signing key")
	}
	if signing, _ := back.Signing(); signing.ID != set.Keys[0].ID {
		t.Errorf("signing key %s, want the newest %s", signing.ID, set.Keys[0].ID)
	}
	if pub.Lookup(set.Keys[1].ID) == nil || pub.Lookup("nope") != nil {
		t.Error("Lookup")
	}
}

func TestRotateKeepsMaxKeys(t *testing.T) {
	set := KeySet{}
	var made []string
	for range MaxKeys + 2 {
		k := newKey(t)
		made = append([]string{k.ID}, made...)
		set = set.Rotate(k)
	}
	if diff := cmp.Diff(made[:MaxKeys], ids(set)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

func TestParseKeySetRejects(t *testing.T) {
	k := newKey(t)
	good, _ := KeySet{Keys: []Key{k}}.MarshalJSON()
	var set struct{ Keys []map[string]any }
	json.Unmarshal(good, &set)
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
		"not JSON":         "{",
		"no keys":          `{"keys":[]}`,
		"kty RSA":          with(func(m map[string]any) { m["kty"] = "RSA" }),
		"crv P-384":        with(func(m map[string]any) { m["crv"] = "P-384" }),
		"alg HS256":        with(func(m map[string]any) { m["alg"] = "HS256" }),
		"no kid":           with(func(m map[string]any) { delete(m, "kid") }),
		"x too short":      with(func(m map[string]any) { m["x"] = b64(make([]byte, 31)) }),
		"x padded":         with(func(m map[string]any) { m["x"] = m["x"].(string) + "=" }),
		"y not base64url":  with(func(m map[string]any) { m["y"] = "!!" }),
		"off the curve":    with(func(m map[string]any) { m["y"] = b64(make([]byte, 32)) }),
		"d of another key": with(func(m map[string]any) { m["d"] = b64(od) }),
		"d zero":           with(func(m map[string]any) { m["d"] = b64(make([]byte, 32)) }),
		"repeated kid":     twice,
	} {
		if _, err := ParseKeySet([]byte(data)); err == nil {
			t.Errorf("%s: accepted %s", name, data)
		}
	}
	if _, err := ParseKeySet(good); err != nil {
		t.Errorf("the good set: %v", err)
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
