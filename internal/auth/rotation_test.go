package auth

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
)

// authorizerLag is how long after the keys function writes a new key set
// the same deployment gives the authorizer its public keys: CloudFormation
// updates the authorizer once the custom resource answers. Within
// PublishDelay, as the stack must be.
const authorizerLag = 3 * time.Minute

// Across more rotations than the set keeps, at any pace the rotation bound
// allows: every token that any warm login instance issues verifies with the
// authorizer of its moment, for its whole lifetime, including an instance
// that fails to read the secret for a while.
func TestRotationSequence(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the flaky instance's warnings
	lifetime := testConfig.Lifetime
	for _, every := range []time.Duration{time.Hour, 10 * time.Minute, (PublishDelay + KeyMaxStale + lifetime) / (login.MaxKeys - 1)} {
		t.Run("every "+every.String(), func(t *testing.T) {
			now := testNow
			clock := func() time.Time { return now }
			secret := &memorySecret{}
			keys := &KeyResource{Secret: secret, Lifetime: lifetime, Now: clock}

			// published is each key set the authorizer has had, from
			// when.
			type jwks struct {
				from time.Time
				set  KeySet
			}
			var published []jwks
			rotate := func(typ cfn.RequestType, gen int) {
				_, data, err := keys.Handle(context.Background(), keyEvent(typ, gen, gen-1))
				if err != nil {
					t.Fatal(err)
				}
				set, err := ParseKeySet([]byte(data["Jwks"].(string)))
				if err != nil {
					t.Fatal(err)
				}
				if n := len(set.Keys); n > login.MaxKeys {
					t.Fatalf("%d keys published", n)
				}
				published = append(published, jwks{now.Add(authorizerLag), set})
			}
			// setAt is the index in published of the key set the
			// authorizer has at.
			setAt := func(at time.Time) int {
				i := 0
				for j, p := range published {
					if !p.from.After(at) {
						i = j
					}
				}
				return i
			}
			rotate(cfn.RequestCreate, 1)

			// Two warm instances: one reads the secret whenever due, the
			// other fails to read it four minutes in five.
			reads := 0
			load := func(ctx context.Context) (KeySet, error) { return ParseKeySet(secret.value) }
			flaky := func(ctx context.Context) (KeySet, error) {
				if reads++; reads%5 != 1 {
					return KeySet{}, errors.New("secrets manager is not answering")
				}
				return load(ctx)
			}
			instances := []*KeyRing{
				{Tokens: testConfig, LoadKeys: load, now: clock},
				{Tokens: testConfig, LoadKeys: flaky, now: clock},
			}
			for _, h := range instances {
				if err := h.Reload(context.Background()); err != nil {
					t.Fatal(err)
				}
			}

			// A token is verified whenever the key set that the
			// authorizer has now, or will have at the end of the token's
			// life, is one the token has not met: nothing else changes
			// what Verify answers within a token's life.
			type token struct {
				value    string
				issued   time.Time
				now, end int // the sets last verified with, or -1
			}
			var live []token
			gen, next := 1, now.Add(every)
			end := now.Add(time.Duration(login.MaxKeys+3) * every)
			issued, unavailable := 0, 0
			for ; now.Before(end); now = now.Add(time.Minute) {
				if !now.Before(next) {
					gen++
					rotate(cfn.RequestUpdate, gen)
					next = next.Add(every)
				}
				for i, h := range instances {
					s, err := h.current(context.Background())
					if quire.ErrorCode(err) == quire.EUNAVAILABLE {
						unavailable++ // no key fresh enough: 503, not a bad token
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					v, err := s.issuer.Issue(quire.ID(i+1), quire.RoleCustomer)
					if err != nil {
						t.Fatal(err)
					}
					live = append(live, token{v, now, -1, -1})
					issued++
				}
				kept := live[:0]
				for _, tok := range live {
					if now.Sub(tok.issued) >= lifetime {
						continue
					}
					// Check the token now and at the end of its life.
					for at, last := range map[time.Time]*int{now: &tok.now, tok.issued.Add(lifetime - time.Second): &tok.end} {
						if i := setAt(at); i != *last {
							if _, err := NewVerifier(published[i].set, testConfig, func() time.Time { return at }).Verify(tok.value); err != nil {
								t.Fatalf("at %v: a token issued at %v (rotation %d) fails at %v: %v",
									now.Sub(testNow), tok.issued.Sub(testNow), gen, at.Sub(testNow), err)
							}
							*last = i
						}
					}
					kept = append(kept, tok)
				}
				live = kept
			}
			if gen <= login.MaxKeys+1 {
				t.Fatalf("only %d rotations", gen)
			}
			t.Logf("%d rotations, %d tokens issued, %d requests refused for stale keys", gen-1, issued, unavailable)
		})
	}
}
