package login

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quireapi/quire/internal/quire"
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

// After decides a guess whose reservation found the window full, ended or
// changed: locked with the wait while MaxLoginFailures guesses (or more, a
// retry's double count) are counted in a live window; otherwise reserve
// again, starting a window over one that ended.
func TestGuessAfter(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	g := NewGuess(now)
	if want := (Guess{Now: now, Until: now.Add(LoginWindow), Limit: MaxLoginFailures}); g != want {
		t.Fatalf("NewGuess = %+v, want %+v", g, want)
	}
	restart, join := g, g
	restart.Restart = true
	for _, tc := range []struct {
		name   string
		g      Guess
		stored Attempts
		want   Guess
		wait   int // seconds; 0 for no lock
	}{
		{name: "none counted", g: g, stored: Attempts{}, want: restart},
		{name: "a window that ended", g: g, stored: Attempts{Failures: MaxLoginFailures, Until: now}, want: restart},
		{name: "a window that ended long ago", g: g, stored: Attempts{Failures: 2, Until: now.Add(-time.Hour)}, want: restart},
		{name: "a live window with room", g: restart, stored: Attempts{Failures: 1, Until: now.Add(time.Minute)}, want: join},
		{name: "a full window", g: g, stored: Attempts{Failures: MaxLoginFailures, Until: now.Add(90 * time.Second)}, wait: 90},
		{name: "a window counted past full", g: g, stored: Attempts{Failures: MaxLoginFailures + 1, Until: now.Add(1500 * time.Millisecond)}, wait: 2},
		{name: "a full window in its last instant", g: g, stored: Attempts{Failures: MaxLoginFailures, Until: now.Add(time.Millisecond)}, wait: 1},
		{name: "a full window another guess started later", g: g, stored: Attempts{Failures: MaxLoginFailures, Until: now.Add(LoginWindow + 700*time.Millisecond)}, wait: 900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, locked := tc.g.After(tc.stored)
			switch {
			case tc.wait > 0 && (locked == nil || locked.Code != quire.ETHROTTLED || locked.RetryAfter != tc.wait):
				t.Errorf("After = %v, want ETHROTTLED after %d s", locked, tc.wait)
			case tc.wait == 0 && (locked != nil || next != tc.want):
				t.Errorf("After = %+v, %v; want %+v", next, locked, tc.want)
			}
		})
	}
}

// guesses is a Guesses that applies a Guess to one stored count, as the
// DynamoDB store's condition does, after others' writes land first.
type guesses struct {
	stored Attempts
	others []Attempts // what other requests store before each reservation
	calls  int
}

func (s *guesses) Reserve(_ context.Context, _ string, g Guess) (Attempts, error) {
	if s.calls < len(s.others) {
		s.stored = s.others[s.calls]
	}
	s.calls++
	switch {
	case g.Restart && s.stored.Clean(g.Now):
		s.stored = Attempts{Failures: 1, Until: g.Until}
	case !g.Restart && s.stored.Failures == 0:
		s.stored = Attempts{Failures: 1, Until: g.Until}
	case !g.Restart && g.Now.Before(s.stored.Until) && s.stored.Failures < g.Limit:
		s.stored.Failures++
	default:
		return s.stored, &quire.Stale{What: StaleAttempts}
	}
	return s.stored, nil
}

// Reserve counts a guess in the window it meets, starts a window over one
// that ended, joins one another request started meanwhile, and refuses a
// full one; a count that keeps being raced is ECONFLICT.
func TestReserve(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	live := func(n int) Attempts { return Attempts{Failures: n, Until: now.Add(time.Minute)} }
	ended := Attempts{Failures: MaxLoginFailures, Until: now.Add(-time.Second)}
	for _, tc := range []struct {
		name   string
		s      guesses
		code   string
		calls  int
		stored Attempts
	}{
		{name: "the first guess", calls: 1, stored: Attempts{Failures: 1, Until: now.Add(LoginWindow)}},
		{name: "one more", s: guesses{stored: live(3)}, calls: 1, stored: live(4)},
		{name: "the last one", s: guesses{stored: live(MaxLoginFailures - 1)}, calls: 1, stored: live(MaxLoginFailures)},
		{name: "locked", s: guesses{stored: live(MaxLoginFailures)}, code: quire.ETHROTTLED, calls: 1, stored: live(MaxLoginFailures)},
		{name: "after a window", s: guesses{stored: ended}, calls: 2, stored: Attempts{Failures: 1, Until: now.Add(LoginWindow)}},
		{name: "a window another guess started", s: guesses{stored: ended, others: []Attempts{ended, live(1)}}, calls: 3, stored: live(2)},
		{name: "a window filled meanwhile", s: guesses{stored: ended, others: []Attempts{ended, live(MaxLoginFailures)}}, code: quire.ETHROTTLED, calls: 2, stored: live(MaxLoginFailures)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Reserve(t.Context(), &tc.s, "ada@example.com", now)
			if quire.ErrorCode(err) != tc.code || tc.s.calls != tc.calls || tc.s.stored != tc.stored {
				t.Errorf("Reserve = %v after %d writes, stored %+v; want %q after %d, stored %+v", err, tc.s.calls, tc.s.stored, tc.code, tc.calls, tc.stored)
			}
		})
	}
	t.Run("raced every time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { // the pauses between writes take no real time
			s := &raced{}
			err := Reserve(t.Context(), s, "ada@example.com", now)
			if quire.ErrorCode(err) != quire.ECONFLICT || s.calls != quire.MaxAttempts {
				t.Errorf("Reserve = %v after %d writes; want ECONFLICT after %d", err, s.calls, quire.MaxAttempts)
			}
		})
	})
}

// raced is a Guesses whose every reservation meets a window that changed
// from ended to live and back, as if other guesses kept landing first.
type raced struct{ calls int }

func (s *raced) Reserve(_ context.Context, _ string, g Guess) (Attempts, error) {
	s.calls++
	stored := Attempts{Failures: 1, Until: g.Now.Add(-time.Second)}
	if g.Restart {
		stored.Until = g.Now.Add(time.Minute)
	}
	return stored, &quire.Stale{What: StaleAttempts}
}

// A session lives while its refresh token is the live one, before its
// expiry, and while its user's session epoch is the one it started in.
func TestSessionEnded(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	s := Session{TokenHash: "live", Epoch: 3, Started: start, IdleUntil: start.Add(RefreshIdle), Ends: start.Add(SessionMax)}
	for _, tc := range []struct {
		name  string
		hash  string
		epoch int64
		now   time.Time
		want  string
	}{
		{"alive", "live", 3, start.Add(time.Hour), ""},
		{"a reused token", "dead", 3, start.Add(time.Hour), "refresh token reused"},
		{"idle too long", "live", 3, start.Add(RefreshIdle), "session expired"},
		{"revoked", "live", 4, start.Add(time.Hour), "sessions revoked since"},
		{"reused after its expiry", "dead", 4, start.Add(SessionMax), "refresh token reused"},
	} {
		if got := s.Ended(tc.hash, tc.epoch, tc.now); got != tc.want {
			t.Errorf("%s: Ended = %q, want %q", tc.name, got, tc.want)
		}
	}
}
