package auth

import (
	"math"
	"time"

	"github.com/quireapi/quire/shared/quire"
)

// Failed logins cost the attacker, not the users. Each email's failed logins
// (a wrong password at login, or a wrong current password when changing
// one's email or password) are counted in a window that starts at the
// first failure and lasts LoginWindow; at MaxLoginFailures the email is
// locked until the window ends: login answers 429 with Retry-After without
// checking the password (so a locked guess costs no argon2id hash). An
// email nobody has is counted and locked the same way, with the same
// requests, so the lock tells nothing about which emails have accounts. The
// real owner waits out at most LoginWindow; a successful login clears the
// count.
//
// An attacker gets MaxLoginFailures guesses per email per LoginWindow: 480
// a day. Spreading guesses over many emails is what the web ACL's per-IP
// limit and the stage's throttling are for.
const (
	MaxLoginFailures = 5
	LoginWindow      = 15 * time.Minute
)

// Attempts are an email's failed logins in the current window.
type Attempts struct {
	Failures int
	Until    time.Time // the window's end; zero for none
}

// Clean reports whether no failure is counted at now.
func (a Attempts) Clean(now time.Time) bool { return a.Failures == 0 || !now.Before(a.Until) }

// Check returns ETHROTTLED, with the wait in seconds, when the email is
// locked at now; nil otherwise.
func (a Attempts) Check(now time.Time) *quire.Error {
	if a.Clean(now) || a.Failures < MaxLoginFailures {
		return nil
	}
	return &quire.Error{Code: quire.ETHROTTLED, Message: "Too many failed logins for this email; try again after Retry-After seconds.",
		RetryAfter: int(math.Ceil(a.Until.Sub(now).Seconds()))}
}
