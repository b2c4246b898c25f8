package dynamo

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/access"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// UserStore keeps users in the users table: one item per user under
// "user#<id>", and one "email#<email>" item per user that reserves the
// email, written in the same transaction, so that no two users share one.
// It keeps each email's failed logins in the sessions table (see
// logins.go).
type UserStore struct {
	db       *dynamodb.Client
	table    string
	sessions string
	carts    string
	records  string
	events   string
	now      func() time.Time
}

// NewUserStore returns a UserStore on db with the physical table names t.
func NewUserStore(db *dynamodb.Client, t TableNames) *UserStore {
	return &UserStore{db: db, table: t.Physical(routes.TableUsers), sessions: t.Physical(routes.TableSessions),
		carts: t.Physical(routes.TableCarts), records: t.Physical(routes.TableIdempotency),
		events: t.Physical(routes.TableEvents), now: time.Now}
}

// The partition key values and list partition of the users table.
const (
	userPrefix  = "user#"
	emailPrefix = "email#"
	listUsers   = "user"
)

// attrPassword holds a user's password hash, which no representation of
// the user carries: on the email's reservation, which login reads, and on
// the user item, which a change of email or password reads (its indexes
// hold keys only). Both change in one transaction.
const attrPassword = "password_hash"

func userKey(id quire.ID) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(userPrefix + id.String())}
}

func emailKey(email string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(emailPrefix + users.EmailKey(email))}
}

// CommitCreate stores ch's new user with the password hash, and reserves
// its email, with ch's event and rec in one transaction: the user under an
// id no user has, the reservation under an email no user has (a taken
// email is reported before a taken id).
func (s *UserStore) CommitCreate(ctx context.Context, ch users.Change, passwordHash string, rec *idempotency.Record) error {
	u := ch.User
	item := userItem(&u)
	reservation := emailKey(u.Email)
	reservation["user_id"], reservation["role"] = num(int64(u.ID)), str(string(users.LoginRole(u.Role, u.Status)))
	if passwordHash != "" {
		reservation[attrPassword] = str(passwordHash)
		item[attrPassword] = str(passwordHash)
	}
	var t tx
	t = append(t, named{users.StaleEmail, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}}})
	t = append(t, named{users.StaleUser, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}}})
	t = append(t, published(s.events, ch.Event)...)
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("create user %d: %w", u.ID, err)
	}
	return nil
}

// Get returns the user id, or ENOTFOUND.
func (s *UserStore) Get(ctx context.Context, id quire.ID) (*users.User, error) {
	item, err := s.item(ctx, id)
	if err != nil {
		return nil, err
	}
	return parseUser(item)
}

// Standing returns the account of the user id as it stands, read
// consistently: its role and status alone (one read unit): ENOTFOUND when
// there is none.
func (s *UserStore) Standing(ctx context.Context, id quire.ID) (access.Account, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#role, #status"),
		ExpressionAttributeNames: map[string]string{"#role": "role", "#status": "status"},
	})
	if err != nil {
		return access.Account{}, fmt.Errorf("get the account of user %d: %w", id, err)
	}
	if out.Item == nil {
		return access.Account{}, quire.NotFound("user " + id.String())
	}
	var r reader
	a := access.Account{Role: quire.Role(r.str(out.Item, "role")), Closed: users.Status(r.str(out.Item, "status")) != users.StatusActive}
	if r.err != nil {
		return access.Account{}, fmt.Errorf("read the account of user %d: %w", id, r.err)
	}
	return a, nil
}

// item reads the item of the user id consistently: ENOTFOUND if none.
func (s *UserStore) item(ctx context.Context, id quire.ID) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get user %d: %w", id, err)
	}
	if out.Item == nil {
		return nil, quire.NotFound("user " + id.String())
	}
	return out.Item, nil
}

// List returns a page of users from a sparse index (see queryPage): "active"
// for active users, "list" for all. It reads one item more than it returns
// to know whether a next page exists. The indexes hold keys only, so the
// page's users are then read, consistently, in one BatchGetItem: two
// requests a page, whatever its size.
func (s *UserStore) List(ctx context.Context, q users.ListQuery) ([]users.User, quire.ID, error) {
	index, key, value := indexActive, attrActivePK, listUsers
	switch {
	case q.Role != "":
		index, key, value = indexRole, attrRolePK, string(q.Role)
	case q.AnyStatus:
		index, key = indexList, attrListPK
	}
	us, next, err := queryPage(ctx, s.db, &dynamodb.QueryInput{
		TableName:                &s.table,
		IndexName:                aws.String(index),
		KeyConditionExpression:   aws.String("#p = :p AND id > :after"),
		ExpressionAttributeNames: map[string]string{"#p": key},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": str(value), ":after": num(int64(q.After)),
		},
	}, q.Limit, parseKey)
	if err != nil {
		return nil, 0, fmt.Errorf("list users after %d: %w", q.After, err)
	}
	if len(us) == 0 {
		return nil, next, nil
	}
	keys := make([]map[string]types.AttributeValue, len(us))
	for i, id := range us {
		keys[i] = userKey(id)
	}
	items, err := batchGet(ctx, s.db, s.table, "users", keys)
	if err != nil {
		return nil, 0, fmt.Errorf("list users after %d: %w", q.After, err)
	}
	byID := map[quire.ID]*users.User{}
	for _, item := range items {
		u, err := parseUser(item)
		if err != nil {
			return nil, 0, err
		}
		byID[u.ID] = u
	}
	out := make([]users.User, 0, len(us))
	for _, id := range us {
		if u, ok := byID[id]; ok { // deleted between the Query and the read
			out = append(out, *u)
		}
	}
	return out, next, nil
}

// parseKey reads the id of an index item.
func parseKey(item map[string]types.AttributeValue) (*quire.ID, error) {
	var r reader
	id := quire.ID(r.num(item, attrID))
	if r.err != nil {
		return nil, fmt.Errorf("read index item: %w", r.err)
	}
	return &id, nil
}

// Stored reads the user id, consistently, with its credentials (see
// credentialsOf): ENOTFOUND when there is none. The user item carries what
// its email's reservation does: one read.
func (s *UserStore) Stored(ctx context.Context, id quire.ID) (users.Stored, error) {
	item, err := s.item(ctx, id)
	if err != nil {
		return users.Stored{}, err
	}
	u, err := parseUser(item)
	if err != nil {
		return users.Stored{}, err
	}
	c, err := s.credentialsOf(ctx, item, u.Email)
	if err != nil {
		return users.Stored{}, err
	}
	return users.Stored{User: *u, PasswordHash: c.passwordHash, Epoch: c.epoch}, nil
}

// CommitRevision writes rev over the user as read. A revision that changes
// only the user item (no new password, role or status, the same email) is
// one UpdateItem; any other is one transaction of named items: the user;
// its email's reservation, updated in place when the revision ends the
// user's sessions, or put under the new email (no user has it) and deleted
// under the old one; and, for a proved revision, the deletion of the
// guesses counted against the old email.
func (s *UserStore) CommitRevision(ctx context.Context, rev users.Revision) error {
	u := rev.User
	values := map[string]types.AttributeValue{
		":email": str(u.Email), ":first": str(u.FirstName),
		":role": str(string(u.Role)), ":status": str(string(u.Status)),
		":now": str(u.UpdatedAt.Format(time.RFC3339Nano)), ":hash": str(u.Hash), ":read": str(rev.ReadHash),
	}
	set := []string{"email = :email", "first_name = :first", "#role = :role", "#status = :status", "updated_at = :now", "#hash = :hash"}
	var remove []string
	if u.LastName != "" { // a v2 name of one word has no last name
		set = append(set, "last_name = :last")
		values[":last"] = str(u.LastName)
	} else {
		remove = append(remove, "last_name")
	}
	if u.Status == users.StatusActive {
		set = append(set, attrActivePK+" = :list", attrRolePK+" = :role")
		values[":list"] = str(listUsers)
	} else {
		remove = append(remove, attrActivePK, attrRolePK)
	}
	expr := "SET " + strings.Join(set, ", ")
	if remove != nil {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	if rev.Password != "" {
		expr += ", " + attrPassword + " = :password"
		values[":password"] = str(rev.Password)
	}
	if rev.EndSessions {
		expr += " ADD " + attrEpoch + " :one"
		values[":one"] = num(1)
	}
	update := &types.Update{
		TableName:                 &s.table,
		Key:                       userKey(u.ID),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#hash = :read"),
		ExpressionAttributeNames:  map[string]string{"#role": "role", "#status": "status", "#hash": attrHash},
		ExpressionAttributeValues: values,
	}
	if !rev.MovesEmail() && !rev.EndSessions && len(rev.Events) == 0 {
		return s.updateUser(ctx, update, u)
	}
	var t tx
	t = append(t, named{users.StaleUser, types.TransactWriteItem{Update: update}})
	for i := range rev.Events {
		t = append(t, published(s.events, &rev.Events[i])...)
	}
	switch {
	case !rev.MovesEmail() && rev.EndSessions: // the reservation's credentials move with the user's
		t = append(t, named{users.StaleReservation, types.TransactWriteItem{Update: s.credentials(rev.OldEmail, users.LoginRole(u.Role, u.Status), rev.Password)}})
	case rev.MovesEmail():
		reservation := emailKey(u.Email)
		reservation["user_id"], reservation["role"] = num(int64(u.ID)), str(string(users.LoginRole(u.Role, u.Status)))
		reservation[attrEpoch] = num(rev.Carried.Epoch)
		if rev.Carried.PasswordHash != "" {
			reservation[attrPassword] = str(rev.Carried.PasswordHash)
		}
		t = append(t, named{users.StaleEmail, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}}})
		t = append(t, named{"old email", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: emailKey(rev.OldEmail)}}})
	}
	if rev.Proved {
		t = append(t, named{login.StaleAttempts, clearGuesses(s.sessions, rev.OldEmail)})
	}
	if err := commit(ctx, s.db, t, "", nil); err != nil {
		return fmt.Errorf("replace user %d: %w", u.ID, err)
	}
	return nil
}

// CommitProfile writes the profile ch changes over the user as read: in
// one UpdateItem, or with ch's event in one transaction.
func (s *UserStore) CommitProfile(ctx context.Context, ch users.Change, _ *idempotency.Record) error {
	u := ch.User
	update := &types.Update{
		TableName:                &s.table,
		Key:                      userKey(u.ID),
		UpdateExpression:         aws.String("SET profile = :p, updated_at = :now, #hash = :hash"),
		ConditionExpression:      aws.String("#hash = :read"),
		ExpressionAttributeNames: map[string]string{"#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": profileItem(u.Profile), ":now": str(u.UpdatedAt.Format(time.RFC3339Nano)),
			":hash": str(u.Hash), ":read": str(ch.ReadHash),
		},
	}
	if ch.Event == nil {
		return s.updateUser(ctx, update, u)
	}
	t := append(tx{{users.StaleUser, types.TransactWriteItem{Update: update}}}, published(s.events, ch.Event)...)
	if err := commit(ctx, s.db, t, "", nil); err != nil {
		return fmt.Errorf("update user %d: %w", u.ID, err)
	}
	return nil
}

// updateUser runs update, a change of the user u's item alone, as one
// UpdateItem: a *quire.Stale naming users.StaleUser when its condition
// fails, unless the item holds u already (the write landed, its answer was
// lost, and the SDK's retry met the write itself).
func (s *UserStore) updateUser(ctx context.Context, update *types.Update, u users.User) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: update.TableName, Key: update.Key, UpdateExpression: update.UpdateExpression,
		ConditionExpression: update.ConditionExpression, ExpressionAttributeNames: update.ExpressionAttributeNames,
		ExpressionAttributeValues:           update.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return conditioned(err, u.Hash, users.StaleUser, "update user %d", u.ID)
}

// credentials are a user's password hash and session epoch, as stored.
type credentials struct {
	passwordHash string
	epoch        int64
}

// credentialsOf returns the credentials of the user item, or, for a user
// item written before items carried them, of its email's reservation.
func (s *UserStore) credentialsOf(ctx context.Context, item map[string]types.AttributeValue, email string) (credentials, error) {
	if _, ok := item[attrPassword]; !ok {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: emailKey(email), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return credentials{}, fmt.Errorf("read the reservation of a user's email: %w", err)
		}
		item = out.Item
	}
	var r reader
	c := credentials{passwordHash: r.optStr(item, attrPassword), epoch: r.optNum(item, attrEpoch)}
	if r.err != nil {
		return credentials{}, fmt.Errorf("read a user's credentials: %w", r.err)
	}
	return c, nil
}

// credentials is the update of the reservation of email that a write ending
// the user's sessions makes beside the user's: its role (users.LoginRole),
// its password hash when passwordHash is set, and one more session epoch.
func (s *UserStore) credentials(email string, role quire.Role, passwordHash string) *types.Update {
	set := "SET #role = :role"
	values := map[string]types.AttributeValue{":role": str(string(role)), ":one": num(1)}
	if passwordHash != "" {
		set += ", " + attrPassword + " = :password"
		values[":password"] = str(passwordHash)
	}
	return &types.Update{
		TableName: &s.table, Key: emailKey(email),
		UpdateExpression:          aws.String(set + " ADD " + attrEpoch + " :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#role": "role"},
		ExpressionAttributeValues: values,
	}
}

// CommitDeposit writes the deposit ch with rec in one transaction, over
// the user as read.
func (s *UserStore) CommitDeposit(ctx context.Context, ch users.Change, rec *idempotency.Record) error {
	var t tx
	t = append(t, named{users.StaleUser, s.userUpdate(ch, "SET balance = :balance",
		map[string]types.AttributeValue{":balance": num(int64(ch.User.Balance))})})
	t = append(t, published(s.events, ch.Event)...)
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("deposit into user %d: %w", ch.User.ID, err)
	}
	return nil
}

// CommitClose writes the closing ch with rec in one transaction, over the
// user as read: the user leaves the indexes of active users and of roles,
// and its epoch moves on, on the user and on its email's reservation, which
// ends its sessions (the account may still log in, to read its history).
func (s *UserStore) CommitClose(ctx context.Context, ch users.Change, rec *idempotency.Record) error {
	u := ch.User
	var t tx
	t = append(t, named{users.StaleUser, s.userUpdate(ch, "REMOVE "+attrActivePK+", "+attrRolePK+" ADD "+attrEpoch+" :one SET #status = :closed",
		map[string]types.AttributeValue{":closed": str(string(u.Status)), ":one": num(1)})})
	t = append(t, named{users.StaleReservation, types.TransactWriteItem{Update: s.credentials(u.Email, users.LoginRole(u.Role, u.Status), "")}})
	t = append(t, published(s.events, ch.Event)...)
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("close user %d: %w", u.ID, err)
	}
	return nil
}

// userUpdate is the Update of the user ch changes, with expr and its
// values, and its new updated_at and content hash, on the condition that
// the user's content hash is the one read.
func (s *UserStore) userUpdate(ch users.Change, expr string, values map[string]types.AttributeValue) types.TransactWriteItem {
	values[":now"] = str(ch.User.UpdatedAt.Format(time.RFC3339Nano))
	values[":hash"] = str(ch.User.Hash)
	values[":read"] = str(ch.ReadHash)
	names := map[string]string{"#hash": attrHash}
	if strings.Contains(expr, "#status") {
		names["#status"] = "status"
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &s.table,
		Key:                       userKey(ch.User.ID),
		UpdateExpression:          aws.String(expr + ", updated_at = :now, #hash = :hash"),
		ConditionExpression:       aws.String("#hash = :read"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

// Sessions lists the ids of the user's sessions, consistently, as many as
// a deletion's transaction ends (maxSessionDeletes), and whether there are
// more.
func (s *UserStore) Sessions(ctx context.Context, id quire.ID) ([]string, bool, error) {
	keys, more, err := sessionKeys(ctx, s.db, s.sessions, id, maxSessionDeletes)
	if err != nil {
		return nil, false, err
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		var r reader
		sid, _ := strings.CutPrefix(r.str(k, attrSK), "session#")
		if r.err != nil {
			return nil, false, fmt.Errorf("read the key of a session: %w", r.err)
		}
		ids = append(ids, sid)
	}
	return ids, more, nil
}

// CommitDelete removes d's user, on the condition that it is as read, its
// email's reservation and failed logins, its cart and d's sessions, in one
// transaction; then, when d says there are more, the user's other
// sessions.
func (s *UserStore) CommitDelete(ctx context.Context, d users.Deletion) error {
	id := d.User.ID
	var t tx
	t = append(t, named{users.StaleUser, types.TransactWriteItem{Delete: &types.Delete{
		TableName: &s.table, Key: userKey(id),
		ConditionExpression:       aws.String("#hash = :read"),
		ExpressionAttributeNames:  map[string]string{"#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{":read": str(d.User.Hash)},
	}}})
	t = append(t, named{"reservation", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: emailKey(d.User.Email)}}})
	t = append(t, named{"failed logins", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.sessions, Key: loginKey(d.User.Email)}}})
	t = append(t, named{"cart", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.carts, Key: cartKey(id)}}})
	for _, sid := range d.Sessions {
		t = append(t, named{"session", types.TransactWriteItem{Delete: &types.Delete{TableName: &s.sessions, Key: sessionKey(id, sid)}}})
	}
	t = append(t, published(s.events, d.Event)...)
	if err := commit(ctx, s.db, t, "", nil); err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	if d.More {
		if err := endSessions(ctx, s.db, s.sessions, id); err != nil {
			// Dead already, and DynamoDB's TTL removes them: no reason
			// to fail a deletion that happened.
			slog.WarnContext(ctx, "sessions of a deleted user left to expire", "user_id", id, "err", err)
		}
	}
	return nil
}

// maxSessionDeletes is how many sessions a user's deletion ends in its
// transaction, beside its 6 other items at most, its event among them
// (DynamoDB takes 100).
const maxSessionDeletes = 90

// userItem is the item of u, whose content hash it sets.
func userItem(u *users.User) map[string]types.AttributeValue {
	u.Hash = quire.ContentHash(u)
	item := map[string]types.AttributeValue{
		attrHash:     str(u.Hash),
		attrPK:       str(userPrefix + u.ID.String()),
		attrListPK:   str(listUsers),
		attrID:       num(int64(u.ID)),
		"email":      str(u.Email),
		"first_name": str(u.FirstName),
		"role":       str(string(u.Role)),
		"status":     str(string(u.Status)),
		"balance":    num(int64(u.Balance)),
		"created_at": str(u.CreatedAt.Format(time.RFC3339Nano)),
		"updated_at": str(u.UpdatedAt.Format(time.RFC3339Nano)),
	}
	if u.LastName != "" {
		item["last_name"] = str(u.LastName)
	}
	if u.Status == users.StatusActive {
		item[attrActivePK] = str(listUsers)
		item[attrRolePK] = str(string(u.Role))
	}
	if u.Profile != (users.Profile{}) {
		item["profile"] = profileItem(u.Profile)
	}
	return item
}

// profileItem is p as a map attribute, without its empty strings: an empty
// field is stored absent (see optStr).
func profileItem(p users.Profile) types.AttributeValue {
	m := map[string]types.AttributeValue{"newsletter": &types.AttributeValueMemberBOOL{Value: p.Newsletter}}
	for name, v := range map[string]string{"bio": p.Bio, "location": p.Location, "website": p.Website} {
		if v != "" {
			m[name] = str(v)
		}
	}
	return &types.AttributeValueMemberM{Value: m}
}

// parseProfile reads the profile attribute of a user item; a user who never
// wrote one has the zero profile.
func parseProfile(r *reader, item map[string]types.AttributeValue) users.Profile {
	v, ok := item["profile"]
	if !ok {
		return users.Profile{}
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		r.fail("profile", "a map")
		return users.Profile{}
	}
	p := users.Profile{Bio: r.optStr(m.Value, "bio"), Location: r.optStr(m.Value, "location"), Website: r.optStr(m.Value, "website")}
	if b, ok := m.Value["newsletter"].(*types.AttributeValueMemberBOOL); ok {
		p.Newsletter = b.Value
	} else {
		r.fail("profile.newsletter", "a boolean")
	}
	return p
}

func parseUser(item map[string]types.AttributeValue) (*users.User, error) {
	var r reader
	u := &users.User{
		ID:        quire.ID(r.num(item, attrID)),
		Email:     r.str(item, "email"),
		FirstName: r.str(item, "first_name"),
		LastName:  r.optStr(item, "last_name"),
		Role:      quire.Role(r.str(item, "role")),
		Status:    users.Status(r.str(item, "status")),
		Balance:   quire.Money(r.num(item, "balance")),
		Profile:   parseProfile(&r, item),
		CreatedAt: r.time(item, "created_at"),
		UpdatedAt: r.time(item, "updated_at"),
		Hash:      r.str(item, attrHash),
	}
	if r.err != nil {
		return nil, fmt.Errorf("read user item %v: %w", item[attrPK], r.err)
	}
	return u, nil
}

// Buyer reads the account that pays, consistently: ENOTFOUND when it is
// gone. It is the order store's read of a user item, beside the user
// store's.
func (s *OrderStore) Buyer(ctx context.Context, user quire.ID) (*users.User, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.users, Key: userKey(user), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read buyer %d: %w", user, err)
	}
	if out.Item == nil {
		return nil, quire.NotFound("user " + user.String())
	}
	return parseUser(out.Item)
}
