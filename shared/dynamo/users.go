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

	"github.com/quireapi/quire/shared/idempotency"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/users"
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
	now      func() time.Time
}

// NewUserStore returns a UserStore on db with the physical table names t.
func NewUserStore(db *dynamodb.Client, t TableNames) *UserStore {
	return &UserStore{db: db, table: t.Physical(routes.TableUsers), sessions: t.Physical(routes.TableSessions),
		carts: t.Physical(routes.TableCarts), records: t.Physical(routes.TableIdempotency), now: time.Now}
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

// CommitCreate stores u with the password hash, and reserves its email,
// with rec in one transaction: the user under an id no user has, the
// reservation under an email no user has (a taken email is reported before
// a taken id).
func (s *UserStore) CommitCreate(ctx context.Context, u users.User, passwordHash string, rec *idempotency.Record) error {
	item := userItem(&u)
	reservation := emailKey(u.Email)
	reservation["user_id"], reservation["role"] = num(int64(u.ID)), str(string(u.Role))
	if passwordHash != "" {
		reservation[attrPassword] = str(passwordHash)
		item[attrPassword] = str(passwordHash)
	}
	var t tx
	t.add(users.StaleEmail, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	t.add(users.StaleUser, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	if err := t.commit(ctx, s.db, s.records, rec); err != nil {
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

// item reads the item of the user id consistently: ENOTFOUND if none.
func (s *UserStore) item(ctx context.Context, id quire.ID) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get user %d: %w", id, err)
	}
	if out.Item == nil {
		return nil, userNotFound(id)
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

// Replace stores u over the user u.ID, keeping what Store.Replace says:
// ENOTFOUND if there is no such user, EEMAILTAKEN if u's email belongs to
// another user, EPRECONDITION if the user fails pre. The write is
// conditioned on the content hash read, and a changed email moves its
// reservation in the same transaction. The user item carries what the
// reservation needs (the password hash and session epoch): one read before
// the write. A change that prove passes commits only if the stored email is
// not locked by failed logins (a check in the same transaction), so that a
// locked email's right password is refused with ETHROTTLED, as its wrong
// ones are (see users.Handlers.proveIdentity).
func (s *UserStore) Replace(ctx context.Context, u *users.User, passwordHash string, pre quire.Precondition, prove func(users.Credentials) error) (*users.User, error) {
	now := s.now()
	item, err := s.item(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	old, err := parseUser(item)
	if err != nil {
		return nil, err
	}
	if err := pre.Check(old.Hash); err != nil {
		return nil, err
	}
	sameEmail := users.EmailKey(old.Email) == users.EmailKey(u.Email)
	proof := prove != nil && (passwordHash != "" || !sameEmail)
	var secret credentials
	if proof || !sameEmail {
		if secret, err = s.credentialsOf(ctx, item, old.Email); err != nil {
			return nil, err
		}
	}
	// proved, when set, is the last item of the write's transaction.
	var proved []types.TransactWriteItem
	if proof {
		if err := prove(users.Credentials{Email: old.Email, PasswordHash: secret.passwordHash}); err != nil {
			return nil, err
		}
		proved = []types.TransactWriteItem{s.unlocked(old.Email, now)}
	}
	stored := *u
	if stored.Role == "" {
		stored.Role = old.Role
	}
	if stored.Status == "" {
		stored.Status = old.Status
	}
	stored.Balance, stored.Profile, stored.CreatedAt = old.Balance, old.Profile, old.CreatedAt
	stored.UpdatedAt = s.updatedAt(old)
	stored.Hash = quire.ContentHash(&stored)
	values := map[string]types.AttributeValue{
		":email": str(stored.Email), ":first": str(stored.FirstName),
		":role": str(string(stored.Role)), ":status": str(string(stored.Status)),
		":now": str(stored.UpdatedAt.Format(time.RFC3339Nano)), ":hash": str(stored.Hash), ":old_hash": str(old.Hash),
	}
	set := []string{"email = :email", "first_name = :first", "#role = :role", "#status = :status", "updated_at = :now", "#hash = :hash"}
	var remove []string
	if stored.LastName != "" { // a v2 name of one word has no last name
		set = append(set, "last_name = :last")
		values[":last"] = str(stored.LastName)
	} else {
		remove = append(remove, "last_name")
	}
	if stored.Status == users.StatusActive {
		set = append(set, attrActivePK+" = :list", attrRolePK+" = :role")
		values[":list"] = str(listUsers)
	} else {
		remove = append(remove, attrActivePK, attrRolePK)
	}
	expr := "SET " + strings.Join(set, ", ")
	if remove != nil {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	// A new password, role or status ends the user's sessions: their
	// tokens' role or status, or the password that started them, is no
	// longer the user's. The email's reservation, which login reads, gets
	// them too (see Account).
	revoke := passwordHash != "" || stored.Role != old.Role || stored.Status != old.Status
	if passwordHash != "" {
		expr += ", " + attrPassword + " = :password"
		values[":password"] = str(passwordHash)
	}
	if revoke {
		expr += " ADD " + attrEpoch + " :one"
		values[":one"] = num(1)
	}
	update := &types.Update{
		TableName:                 &s.table,
		Key:                       userKey(u.ID),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#hash = :old_hash"),
		ExpressionAttributeNames:  map[string]string{"#role": "role", "#status": "status", "#hash": attrHash},
		ExpressionAttributeValues: values,
		// A failed condition returns the user, to say why without reading
		// it again.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if sameEmail && revoke {
		err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
			{Update: update}, {Update: s.credentials(old.Email, stored.Role, passwordHash)},
		}, proved...)}, nil)
		switch failed := cancelled(err); {
		case err == nil:
			return &stored, nil
		case proved != nil && failed[2]:
			return nil, lockedOut(failedItem(err, 2), now)
		case failed[0]:
			return nil, lostRace(u.ID, failedItem(err, 0), pre)
		default:
			return nil, fmt.Errorf("replace user %d: %w", u.ID, err)
		}
	}
	if sameEmail {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: update.TableName, Key: update.Key, UpdateExpression: update.UpdateExpression,
			ConditionExpression: update.ConditionExpression, ExpressionAttributeNames: update.ExpressionAttributeNames,
			ExpressionAttributeValues:           update.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		switch now, applied, lost := raced(err, stored.Hash); {
		case applied:
			return &stored, nil
		case lost:
			return nil, lostRace(u.ID, now, pre)
		case err != nil:
			return nil, fmt.Errorf("replace user %d: %w", u.ID, err)
		}
		return &stored, nil
	}
	// The new reservation carries the old one's password and session
	// epoch, unless this write changes them.
	reservation := emailKey(stored.Email)
	reservation["user_id"], reservation["role"] = num(int64(u.ID)), str(string(stored.Role))
	reservation[attrEpoch] = num(secret.epoch)
	if revoke {
		reservation[attrEpoch] = num(secret.epoch + 1)
	}
	if passwordHash == "" {
		passwordHash = secret.passwordHash
	}
	if passwordHash != "" {
		reservation[attrPassword] = str(passwordHash)
	}
	err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
		{Update: update},
		{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Delete: &types.Delete{TableName: &s.table, Key: emailKey(old.Email)}},
	}, proved...)}, nil)
	switch failed := cancelled(err); {
	case err == nil:
		return &stored, nil
	case proved != nil && failed[3]:
		return nil, lockedOut(failedItem(err, 3), now)
	case failed[1]:
		return nil, emailTaken(stored.Email)
	case failed[0]:
		return nil, lostRace(u.ID, failedItem(err, 0), pre)
	default:
		return nil, fmt.Errorf("replace user %d: %w", u.ID, err)
	}
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
// the user's sessions makes beside the user's: its role, its password hash
// when passwordHash is set, and one more session epoch.
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

// ReplaceProfile stores p as the profile of the user id: ENOTFOUND if there
// is no such user, EPRECONDITION if it fails pre.
func (s *UserStore) ReplaceProfile(ctx context.Context, id quire.ID, p users.Profile, pre quire.Precondition) (*users.User, error) {
	old, err := s.read(ctx, id, pre)
	if err != nil {
		return nil, err
	}
	stored := *old
	stored.Profile, stored.UpdatedAt = p, s.updatedAt(old)
	stored.Hash = quire.ContentHash(&stored)
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.table,
		Key:                      userKey(id),
		UpdateExpression:         aws.String("SET profile = :p, updated_at = :now, #hash = :hash"),
		ConditionExpression:      aws.String("#hash = :old_hash"),
		ExpressionAttributeNames: map[string]string{"#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": profileItem(p), ":now": str(stored.UpdatedAt.Format(time.RFC3339Nano)),
			":hash": str(stored.Hash), ":old_hash": str(old.Hash),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	switch now, applied, lost := raced(err, stored.Hash); {
	case applied:
		return &stored, nil
	case lost:
		return nil, lostRace(id, now, pre)
	case err != nil:
		return nil, fmt.Errorf("replace profile of user %d: %w", id, err)
	}
	return &stored, nil
}

// read returns the user id for a write that requires pre: ENOTFOUND if
// there is no such user, EPRECONDITION if it fails pre.
func (s *UserStore) read(ctx context.Context, id quire.ID, pre quire.Precondition) (*users.User, error) {
	u, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return u, pre.Check(u.Hash)
}

// lostRace says why a write conditioned on the content hash it read failed,
// from the user as DynamoDB returned it with the failure (now): the user is
// gone (ENOTFOUND), or the write's precondition fails now (EPRECONDITION:
// another writer holding the same ETag won), or else the user changed in
// between (ECONFLICT).
func lostRace(id quire.ID, now map[string]types.AttributeValue, pre quire.Precondition) error {
	if now == nil {
		return userNotFound(id)
	}
	if err := pre.Check(hashOf(now)); err != nil {
		return err
	}
	return changedMeanwhile(id)
}

// updatedAt is the time of a write over old (see writeTime).
func (s *UserStore) updatedAt(old *users.User) time.Time {
	return quire.WriteTime(s.now(), old.UpdatedAt)
}

// CommitDeposit writes the deposit ch with rec in one transaction, over
// the user as read.
func (s *UserStore) CommitDeposit(ctx context.Context, ch users.Change, rec *idempotency.Record) error {
	var t tx
	t.add(users.StaleUser, s.userUpdate(ch, "SET balance = :balance",
		map[string]types.AttributeValue{":balance": num(int64(ch.User.Balance))}))
	if err := t.commit(ctx, s.db, s.records, rec); err != nil {
		return fmt.Errorf("deposit into user %d: %w", ch.User.ID, err)
	}
	return nil
}

// CommitClose writes the closing ch with rec in one transaction, over the
// user as read: the user leaves the indexes of active users and of roles,
// its epoch moves on, which ends its sessions, and its email's reservation
// keeps no credentials, which ends its logins.
func (s *UserStore) CommitClose(ctx context.Context, ch users.Change, rec *idempotency.Record) error {
	u := ch.User
	var t tx
	t.add(users.StaleUser, s.userUpdate(ch, "REMOVE "+attrActivePK+", "+attrRolePK+" ADD "+attrEpoch+" :one SET #status = :closed",
		map[string]types.AttributeValue{":closed": str(string(u.Status)), ":one": num(1)}))
	t.add("email", types.TransactWriteItem{Update: s.credentials(u.Email, u.Role, "")})
	if err := t.commit(ctx, s.db, s.records, rec); err != nil {
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

// Delete removes the user id and what belongs only to it: its email's
// reservation and failed logins, its cart and its sessions, in one
// transaction; ENOTFOUND if there is no such user, EPRECONDITION if it
// fails pre, and in either case nothing changes. The user and its
// sessions are read at once (one round trip); sessions beyond what one
// transaction holds, rare, are deleted after it (they cannot be resumed
// once their user is gone). Orders and idempotency records stay (see
// README).
func (s *UserStore) Delete(ctx context.Context, id quire.ID, pre quire.Precondition) error {
	var (
		old      *users.User
		sessions []map[string]types.AttributeValue
		more     bool
	)
	err := quire.Concurrently(
		func() (err error) { old, err = s.read(ctx, id, pre); return err },
		func() (err error) {
			sessions, more, err = sessionKeys(ctx, s.db, s.sessions, id, maxSessionDeletes)
			return err
		},
	)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: &s.table, Key: userKey(id),
			ConditionExpression:                 aws.String("#hash = :hash"),
			ExpressionAttributeNames:            map[string]string{"#hash": attrHash},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":hash": str(old.Hash)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Delete: &types.Delete{TableName: &s.table, Key: emailKey(old.Email)}},
		{Delete: &types.Delete{TableName: &s.sessions, Key: loginKey(old.Email)}},
		{Delete: &types.Delete{TableName: &s.carts, Key: cartKey(id)}},
	}
	for _, key := range sessions {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.sessions, Key: key}})
	}
	err = transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: items}, nil)
	switch failed := cancelled(err); {
	case err == nil:
		if !more {
			return nil
		}
		if err := endSessions(ctx, s.db, s.sessions, id); err != nil {
			// Dead already, and DynamoDB's TTL removes them: no reason
			// to fail a deletion that happened.
			slog.WarnContext(ctx, "sessions of a deleted user left to expire", "user_id", id, "err", err)
		}
		return nil
	case failed[0]:
		// Deleted or changed between the read and the write.
		return lostRace(id, failedItem(err, 0), pre)
	default:
		return fmt.Errorf("delete user %d: %w", id, err)
	}
}

// maxSessionDeletes is how many sessions a user's deletion ends in its
// transaction, beside its 4 other items (DynamoDB takes 100).
const maxSessionDeletes = 90

func userNotFound(id quire.ID) error {
	return quire.Errorf(quire.ENOTFOUND, "No user has the id %d.", id)
}

func emailTaken(email string) error {
	return quire.Errorf(quire.EEMAILTAKEN, "Another user has the email %s.", email)
}

func changedMeanwhile(id quire.ID) error {
	return quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
}

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
