// Package access is who may do what: the routes a role may call, the
// users whose resources a caller acts on, and what a caller's account, as
// stored now, leaves of what its token says. The authorizer (package auth),
// the local gateway (package apigw) and every function's router (package
// rest) decide with it, and nothing else decides.
package access

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// Caller is who makes a request on a protected route: the token's user,
// session and expiry, and the role its account acts with (see Decide).
type Caller struct {
	ID      quire.ID
	Role    quire.Role
	Expires time.Time
	// SessionID is the session the token belongs to ("" for none).
	SessionID string
}

// Admin reports whether the caller acts as an admin.
func (c Caller) Admin() bool { return c.Role == quire.RoleAdmin }

// Owns reports whether the caller may act on the user id's resources: their
// own, or anyone's for an admin.
func (c Caller) Owns(id quire.ID) bool { return c.ID == id || c.Admin() }

// Permits reports whether a caller acting with role may call a route with
// access a.
func Permits(role quire.Role, a routes.Access) bool {
	return a != routes.Admin || role == quire.RoleAdmin
}

// Of returns what a request with method on the route template needs: the
// access of its route (HEAD's is GET's; OPTIONS, a preflight, carries no
// token and needs none), or, for a method the table does not define, the
// path's (its owner then answers 405).
func Of(template, method string) routes.Access {
	switch method {
	case http.MethodOptions:
		return routes.Public
	case http.MethodHead:
		method = http.MethodGet
	}
	for _, r := range routes.All() {
		if r.Path == template && r.Method == method {
			return r.Access
		}
	}
	return routes.PathAccess(template)
}

// Account is a caller's account as stored now.
type Account struct {
	Role   quire.Role
	Closed bool
}

// ActsAs is the role the account acts with (see quire.Role.ActingAs).
func (a Account) ActsAs() quire.Role { return a.Role.ActingAs(a.Closed) }

// Accounts reads callers' accounts.
type Accounts interface {
	// Standing returns the account of the user id, read consistently:
	// *quire.Error with ENOTFOUND when there is none.
	Standing(ctx context.Context, id quire.ID) (Account, error)
}

// Callers reads the accounts of a function's callers for its router: as
// stored now for a write, an /admin route or an admin, and for a
// customer's other reads as read at most Staleness ago, the age a read of
// the catalog may have anyway (0: as stored now, always). So a warm
// instance answers a customer's read it holds with no DynamoDB request; a
// deleted, closed or demoted account's token is refused at once on a
// write or an /admin route, and holds no admin power on any route; and a
// deleted customer's token reads nothing after Staleness.
type Callers struct {
	Accounts  Accounts
	Staleness time.Duration

	mu   sync.Mutex
	held map[quire.ID]heldAccount
}

type heldAccount struct {
	Account
	read time.Time
}

// maxHeld bounds the accounts Callers holds: a crude bound, cleared whole.
const maxHeld = 10000

// Decide returns c, the caller of a request on the route rt whose token
// the authorizer verified, as its account stands (see Callers): with the
// role the account acts with (ActsAs), not the token's. A token past its
// expiry (as the authorizer took it, with leeway) is EUNAUTHORIZED: API
// Gateway may keep a decision cached after the token expired. So is the
// token of an account deleted since its login (Gone). A route the
// account's role may not call is EFORBIDDEN: a closed or demoted admin's
// token no longer opens /admin. A public route reads no account.
func (cs *Callers) Decide(ctx context.Context, c Caller, rt routes.Route, now time.Time, leeway time.Duration) (Caller, error) {
	if rt.Access == routes.Public {
		return c, nil
	}
	if !now.Before(c.Expires.Add(leeway)) {
		return c, quire.Errorf(quire.EUNAUTHORIZED, "The token has expired; log in again.")
	}
	acct, err := cs.account(ctx, c.ID, rt.Method == http.MethodGet && rt.Access != routes.Admin, now)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return c, Gone()
	}
	if err != nil {
		return c, err
	}
	c.Role = acct.ActsAs()
	if !Permits(c.Role, rt.Access) {
		return c, quire.Errorf(quire.EFORBIDDEN, "This route needs the admin role, which this account does not hold now.")
	}
	return c, nil
}

// account reads the account of the user id: when recent will do, a
// customer's held from a read less than Staleness before now.
func (cs *Callers) account(ctx context.Context, id quire.ID, recent bool, now time.Time) (Account, error) {
	if recent && cs.Staleness > 0 {
		cs.mu.Lock()
		h, ok := cs.held[id]
		cs.mu.Unlock()
		if ok && now.Sub(h.read) < cs.Staleness && h.ActsAs() != quire.RoleAdmin {
			return h.Account, nil
		}
	}
	a, err := cs.Accounts.Standing(ctx, id)
	if err != nil || cs.Staleness <= 0 {
		return a, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.held == nil || len(cs.held) >= maxHeld {
		cs.held = map[quire.ID]heldAccount{}
	}
	cs.held[id] = heldAccount{Account: a, read: now}
	return a, nil
}

// Gone is the refusal of a token whose account has been deleted:
// EUNAUTHORIZED on every route. Access tokens are stateless and outlive
// their account by up to their lifetime; every protected request reads its
// caller's account, and finds none.
func Gone() *quire.Error {
	return &quire.Error{Code: quire.EUNAUTHORIZED, Message: "The account of this access token has been deleted; log in with another."}
}
