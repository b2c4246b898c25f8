package auth

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/quireapi/quire/internal/login"
)

// memorySecret is a SecretStore in memory that counts its writes.
type memorySecret struct {
	value  []byte
	saves  int
	failOn error
}

func (m *memorySecret) Load(context.Context) ([]byte, error) { return m.value, nil }

func (m *memorySecret) Save(_ context.Context, v []byte) error {
	if m.failOn != nil {
		return m.failOn
	}
	m.value, m.saves = v, m.saves+1
	return nil
}

const placeholder = `{"placeholder":"replaced by Custom::SigningKeys"}`

func keyEvent(typ cfn.RequestType, generation, oldGeneration any) KeyRequest {
	ev := KeyRequest{
		Type:       string(typ),
		PhysicalID: "arn:aws:secretsmanager:eu-west-1:1:secret:keys",
		Properties: map[string]any{"SecretId": "arn:aws:secretsmanager:eu-west-1:1:secret:keys", "Generation": generation},
	}
	if typ == cfn.RequestUpdate {
		ev.OldProperties = map[string]any{"SecretId": "arn:aws:secretsmanager:eu-west-1:1:secret:keys", "Generation": oldGeneration}
	}
	return ev
}

// stored parses the key set in the secret.
func stored(t *testing.T, s *memorySecret) KeySet {
	t.Helper()
	keys, err := ParseKeySet(s.value)
	if err != nil {
		t.Fatalf("the secret does not hold a key set: %v\n%s", err, s.value)
	}
	return keys
}

// checkAttributes checks that data names the signing key of keys and
// publishes exactly their public keys.
func checkAttributes(t *testing.T, data map[string]any, keys KeySet) {
	t.Helper()
	signing, _ := keys.Signing(testNow)
	if data["SigningKeyId"] != signing.ID {
		t.Errorf("SigningKeyId = %v, want %s", data["SigningKeyId"], signing.ID)
	}
	jwks, _ := data["Jwks"].(string)
	public, err := ParseKeySet([]byte(jwks))
	if err != nil {
		t.Fatalf("Jwks: %v\n%s", err, jwks)
	}
	if len(public.Keys) != len(keys.Keys) {
		t.Fatalf("Jwks has %d keys, want %d", len(public.Keys), len(keys.Keys))
	}
	for i, k := range public.Keys {
		if k.ID != keys.Keys[i].ID || k.Private != nil || !k.Public.Equal(keys.Keys[i].Public) {
			t.Errorf("Jwks key %d = %s (private %v), want the public key %s", i, k.ID, k.Private != nil, keys.Keys[i].ID)
		}
	}
	var raw struct{ Keys []map[string]any }
	if err := json.Unmarshal([]byte(jwks), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range raw.Keys {
		if _, ok := k["d"]; ok {
			t.Errorf("Jwks publishes a private key: %s", jwks)
		}
	}
}

func TestKeyResourceCreate(t *testing.T) {
	secret := &memorySecret{value: []byte(placeholder)}
	r := &KeyResource{Secret: secret, Now: func() time.Time { return testNow }}
	id, data, err := r.Handle(context.Background(), keyEvent(cfn.RequestCreate, "1", nil))
	if err != nil {
		t.Fatal(err)
	}
	if id != "arn:aws:secretsmanager:eu-west-1:1:secret:keys" {
		t.Errorf("physical id %q, want the secret's", id)
	}
	keys := stored(t, secret)
	if secret.saves != 1 || len(keys.Keys) != 1 || keys.Keys[0].Private == nil {
		t.Fatalf("after Create: %d saves, keys %+v", secret.saves, keys)
	}
	checkAttributes(t, data, keys)
}

func TestKeyResourceUpdate(t *testing.T) {
	secret := &memorySecret{}
	r := &KeyResource{Secret: secret, Now: func() time.Time { return testNow }}
	ctx := context.Background()
	if _, _, err := r.Handle(ctx, keyEvent(cfn.RequestCreate, "1", nil)); err != nil {
		t.Fatal(err)
	}
	first := stored(t, secret)

	// An update that leaves Generation alone (another property changed, or
	// the number came as a number) writes nothing and answers the same keys.
	for _, gen := range []any{"1", 1} {
		_, data, err := r.Handle(ctx, keyEvent(cfn.RequestUpdate, gen, "1"))
		if err != nil || secret.saves != 1 {
			t.Fatalf("update with Generation %v: %v, %d saves", gen, err, secret.saves)
		}
		checkAttributes(t, data, first)
	}

	// Each new generation puts a new signing key in front of the others.
	want := first.Keys
	for gen := 2; gen <= login.MaxKeys+2; gen++ {
		_, data, err := r.Handle(ctx, keyEvent(cfn.RequestUpdate, gen, gen-1))
		if err != nil {
			t.Fatal(err)
		}
		keys := stored(t, secret)
		want = append([]Key{keys.Keys[0]}, want...)[:min(len(want)+1, login.MaxKeys)]
		if len(keys.Keys) != len(want) {
			t.Fatalf("generation %d: %d keys, want %d", gen, len(keys.Keys), len(want))
		}
		for i := range want {
			if keys.Keys[i].ID != want[i].ID || keys.Keys[i].Private == nil {
				t.Errorf("generation %d: key %d is %s, want %s with its private key", gen, i, keys.Keys[i].ID, want[i].ID)
			}
		}
		if keys.Keys[0].ID == keys.Keys[1].ID {
			t.Errorf("generation %d did not add a key", gen)
		}
		checkAttributes(t, data, keys)
	}
}

func TestKeyResourceRefuses(t *testing.T) {
	ctx := context.Background()
	t.Run("a secret that is not a key set", func(t *testing.T) {
		secret := &memorySecret{value: []byte(placeholder)}
		r := &KeyResource{Secret: secret}
		if _, _, err := r.Handle(ctx, keyEvent(cfn.RequestUpdate, "2", "1")); err == nil {
			t.Error("Update over a secret that holds no key set succeeded")
		}
		if secret.saves != 0 || string(secret.value) != placeholder {
			t.Errorf("the secret was written: %s", secret.value)
		}
	})
	t.Run("no SecretId", func(t *testing.T) {
		secret := &memorySecret{}
		ev := keyEvent(cfn.RequestCreate, "1", nil)
		delete(ev.Properties, "SecretId")
		if _, _, err := (&KeyResource{Secret: secret}).Handle(ctx, ev); err == nil || secret.saves != 0 {
			t.Errorf("Create without SecretId: %v, %d saves", err, secret.saves)
		}
	})
	t.Run("the secret cannot be written", func(t *testing.T) {
		secret := &memorySecret{failOn: errors.New("AccessDenied")}
		r := &KeyResource{Secret: secret}
		if _, _, err := r.Handle(ctx, keyEvent(cfn.RequestCreate, "1", nil)); err == nil {
			t.Error("Create with a failing secret succeeded")
		}
	})
}

func TestKeyResourceDelete(t *testing.T) {
	secret := &memorySecret{value: []byte("kept")}
	id, _, err := (&KeyResource{Secret: secret}).Handle(context.Background(), keyEvent(cfn.RequestDelete, "1", nil))
	if err != nil || id != "arn:aws:secretsmanager:eu-west-1:1:secret:keys" || secret.saves != 0 || string(secret.value) != "kept" {
		t.Errorf("Delete: %q, %v; secret %q after %d saves", id, err, secret.value, secret.saves)
	}
}
