package login

import (
	"testing"
	"time"
)

func TestTokenConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := TokenConfigFromEnv(env(nil))
	if err != nil || c != (TokenConfig{Issuer: DefaultIssuer, Audience: DefaultAudience, Lifetime: DefaultLifetime}) {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, err = TokenConfigFromEnv(env(map[string]string{"TOKEN_ISSUER": "i", "TOKEN_AUDIENCE": "a", "TOKEN_LIFETIME": "1h"}))
	if err != nil || c != (TokenConfig{Issuer: "i", Audience: "a", Lifetime: time.Hour}) {
		t.Errorf("set: %+v, %v", c, err)
	}
	for _, bad := range []string{"59s", "13h", "15", "soon", "-5m"} {
		if _, err := TokenConfigFromEnv(env(map[string]string{"TOKEN_LIFETIME": bad})); err == nil {
			t.Errorf("TOKEN_LIFETIME %q accepted", bad)
		}
	}
}
