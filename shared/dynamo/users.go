package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/auth"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
	"github.com/quireapi/quire/shared/users"
)

// UserStore keeps users in the users table: one item per user under
// "user#<id>", and one "email#<email>" item per user that reserves the
// email, written in the same transaction, so that no two users share one.
type UserStore struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// NewUserStore returns a UserStore on db with the physical table names t.
func NewUserStore(db *dynamodb.Client, t TableNames) *UserStore {
	return &UserStore{db: db, table: t.Physical(routes.TableUsers), now: time.Now}
}

// The partition key values and list partition of the users table.
const (
	userPrefix  = "user#"
	emailPrefix = "email#"
	listUsers   = "user"
)

// attrPassword holds a user's password hash, which no representation of
// the user carries.
const attrPassword = "password_hash"

// maxIDAttempts bounds retries of a create whose new id was taken.
const maxIDAttempts = 4

func userKey(id quire.ID) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(userPrefix + id.String())}
}

func emailKey(email string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(emailPrefix + users.EmailKey(email))}
}

// Create stores u, with a zero balance and the password hash, and reserves
// its email: under u.ID when it is set (demo data), else under a new id. A
// taken email or a taken preset id is ECONFLICT.
func (s *UserStore) Create(ctx context.Context, u *users.User, passwordHash string) error {
	now := s.now().UTC().Truncate(time.Millisecond)
	u.CreatedAt, u.UpdatedAt, u.Balance = now, now, 0
	preset := u.ID != 0
	for range maxIDAttempts {
		if !preset {
			u.ID = quire.NewID(now)
		}
		item := userItem(u)
		if passwordHash != "" {
			item[attrPassword] = str(passwordHash)
		}
		reservation := emailKey(u.Email)
		reservation["user_id"] = num(int64(u.ID))
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}})
		switch failed := cancelled(err); {
		case err == nil:
			return nil
		case failed[1]:
			return emailTaken(u.Email)
		case failed[0] && preset:
			return quire.Errorf(quire.ECONFLICT, "The id %d is taken.", u.ID)
		case failed[0]:
			continue // the id was taken in the same millisecond: draw again
		default:
			return fmt.Errorf("create user: %w", err)
		}
	}
	return fmt.Errorf("create user: no free id after %d attempts", maxIDAttempts)
}

// Get returns the user id, or ENOTFOUND.
func (s *UserStore) Get(ctx context.Context, id quire.ID) (*users.User, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get user %d: %w", id, err)
	}
	if out.Item == nil {
		return nil, userNotFound(id)
	}
	return parseUser(out.Item)
}

// List returns a page of users in one Query of a sparse index: "active"
// for active users, "list" for all. It reads one item more than it returns
// to know whether a next page exists.
func (s *UserStore) List(ctx context.Context, q users.ListQuery) ([]users.User, quire.ID, error) {
	index, key := indexActive, attrActivePK
	if q.AnyStatus {
		index, key = indexList, attrListPK
	}
	limit, after := q.Limit, q.After
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                &s.table,
		IndexName:                aws.String(index),
		KeyConditionExpression:   aws.String("#p = :p AND id > :after"),
		ExpressionAttributeNames: map[string]string{"#p": key},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": str(listUsers), ":after": num(int64(after)),
		},
		Limit: aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list users after %d: %w", after, err)
	}
	us := make([]users.User, 0, len(out.Items))
	for _, item := range out.Items {
		u, err := parseUser(item)
		if err != nil {
			return nil, 0, err
		}
		us = append(us, *u)
	}
	var next quire.ID
	if len(us) > limit {
		us = us[:limit]
		next = us[limit-1].ID
	}
	return us, next, nil
}

// Replace stores the writable fields of u over the user u.ID, keeping the
// stored role and status where u's are zero and the stored password where
// passwordHash is "": ENOTFOUND if there is no such user, ECONFLICT if u's
// email belongs to another user. A changed email moves its reservation in
// the same transaction.
func (s *UserStore) Replace(ctx context.Context, u *users.User, passwordHash string) (*users.User, error) {
	old, err := s.Get(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if u.Role == "" {
		u.Role = old.Role
	}
	if u.Status == "" {
		u.Status = old.Status
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	values := map[string]types.AttributeValue{
		":email": str(u.Email), ":first": str(u.FirstName), ":last": str(u.LastName),
		":role": str(string(u.Role)), ":status": str(string(u.Status)),
		":now": str(now.Format(time.RFC3339Nano)), ":old": str(old.Email),
	}
	set := "SET email = :email, first_name = :first, last_name = :last, #role = :role, #status = :status, updated_at = :now"
	if passwordHash != "" {
		set += ", " + attrPassword + " = :password"
		values[":password"] = str(passwordHash)
	}
	expr := set + " REMOVE " + attrActivePK
	if u.Status == users.StatusActive {
		expr = set + ", " + attrActivePK + " = :list"
		values[":list"] = str(listUsers)
	}
	update := &types.Update{
		TableName:        &s.table,
		Key:              userKey(u.ID),
		UpdateExpression: aws.String(expr),
		// The email must still be the one whose reservation is moved.
		ConditionExpression:       aws.String("attribute_exists(pk) AND email = :old"),
		ExpressionAttributeNames:  map[string]string{"#role": "role", "#status": "status"},
		ExpressionAttributeValues: values,
	}
	if users.EmailKey(old.Email) == users.EmailKey(u.Email) {
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: update.TableName, Key: update.Key, UpdateExpression: update.UpdateExpression,
			ConditionExpression: update.ConditionExpression, ExpressionAttributeNames: update.ExpressionAttributeNames,
			ExpressionAttributeValues: update.ExpressionAttributeValues, ReturnValues: types.ReturnValueAllNew,
		})
		if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
			return nil, changedMeanwhile(u.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("replace user %d: %w", u.ID, err)
		}
		return parseUser(out.Attributes)
	}
	reservation := emailKey(u.Email)
	reservation["user_id"] = num(int64(u.ID))
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: update},
		{Put: &types.Put{TableName: &s.table, Item: reservation, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Delete: &types.Delete{TableName: &s.table, Key: emailKey(old.Email)}},
	}})
	switch failed := cancelled(err); {
	case err == nil:
	case failed[1]:
		return nil, emailTaken(u.Email)
	case failed[0]:
		return nil, changedMeanwhile(u.ID)
	default:
		return nil, fmt.Errorf("replace user %d: %w", u.ID, err)
	}
	stored := *u
	stored.Balance, stored.CreatedAt, stored.UpdatedAt = old.Balance, old.CreatedAt, now
	return &stored, nil
}

// Delete removes the user id and frees its email: ENOTFOUND if there is no
// such user, in which case nothing changes.
func (s *UserStore) Delete(ctx context.Context, id quire.ID) error {
	old, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: &s.table, Key: userKey(id),
			ConditionExpression:       aws.String("attribute_exists(pk) AND email = :email"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":email": str(old.Email)},
		}},
		{Delete: &types.Delete{TableName: &s.table, Key: emailKey(old.Email)}},
	}})
	switch failed := cancelled(err); {
	case err == nil:
		return nil
	case failed[0]:
		// Deleted or changed between the read and the write: read again.
		if _, err := s.Get(ctx, id); err != nil {
			return err
		}
		return changedMeanwhile(id)
	default:
		return fmt.Errorf("delete user %d: %w", id, err)
	}
}

// Account returns the id, role and password hash of the user with email,
// read consistently (a user who just signed up can log in at once), or
// ENOTFOUND. It reads the email's reservation, then the user; for an email
// nobody has it reads a user that cannot exist, so that both answers cost
// the same two reads and the time of a failed login does not tell whether
// the email has an account.
func (s *UserStore) Account(ctx context.Context, email string) (auth.Account, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: emailKey(email), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return auth.Account{}, fmt.Errorf("get account of an email: %w", err)
	}
	var r reader
	var id quire.ID // 0, which no user has, for an unknown email
	if out.Item != nil {
		if id = quire.ID(r.num(out.Item, "user_id")); r.err != nil {
			return auth.Account{}, fmt.Errorf("read email reservation: %w", r.err)
		}
	}
	out, err = s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#role, " + attrPassword),
		ExpressionAttributeNames: map[string]string{"#role": "role"},
	})
	if err != nil {
		return auth.Account{}, fmt.Errorf("get account of user %d: %w", id, err)
	}
	if out.Item == nil {
		return auth.Account{}, quire.Errorf(quire.ENOTFOUND, "No user has this email.")
	}
	a := auth.Account{ID: id, Role: quire.Role(r.str(out.Item, "role"))}
	if h, ok := out.Item[attrPassword].(*types.AttributeValueMemberS); ok {
		a.PasswordHash = h.Value
	}
	if r.err != nil {
		return auth.Account{}, fmt.Errorf("read account of user %d: %w", id, r.err)
	}
	return a, nil
}

func userNotFound(id quire.ID) error {
	return quire.Errorf(quire.ENOTFOUND, "No user has the id %d.", id)
}

func emailTaken(email string) error {
	return quire.Errorf(quire.ECONFLICT, "Another user has the email %s.", email)
}

func changedMeanwhile(id quire.ID) error {
	return quire.Errorf(quire.ECONFLICT, "The user %d changed during the request; retry it.", id)
}

// cancelled reports, for a cancelled transaction, which of its items failed
// their condition. It is empty for any other error.
func cancelled(err error) map[int]bool {
	tce, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		return nil
	}
	failed := map[int]bool{}
	for i, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" {
			failed[i] = true
		}
	}
	return failed
}

func userItem(u *users.User) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		attrPK:       str(userPrefix + u.ID.String()),
		attrListPK:   str(listUsers),
		attrID:       num(int64(u.ID)),
		"email":      str(u.Email),
		"first_name": str(u.FirstName),
		"last_name":  str(u.LastName),
		"role":       str(string(u.Role)),
		"status":     str(string(u.Status)),
		"balance":    num(int64(u.Balance)),
		"created_at": str(u.CreatedAt.Format(time.RFC3339Nano)),
		"updated_at": str(u.UpdatedAt.Format(time.RFC3339Nano)),
	}
	if u.Status == users.StatusActive {
		item[attrActivePK] = str(listUsers)
	}
	return item
}

func parseUser(item map[string]types.AttributeValue) (*users.User, error) {
	var r reader
	u := &users.User{
		ID:        quire.ID(r.num(item, attrID)),
		Email:     r.str(item, "email"),
		FirstName: r.str(item, "first_name"),
		LastName:  r.str(item, "last_name"),
		Role:      quire.Role(r.str(item, "role")),
		Status:    users.Status(r.str(item, "status")),
		Balance:   quire.Money(r.num(item, "balance")),
		CreatedAt: r.time(item, "created_at"),
		UpdatedAt: r.time(item, "updated_at"),
	}
	if r.err != nil {
		return nil, fmt.Errorf("read user item %v: %w", item[attrPK], r.err)
	}
	return u, nil
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// reader reads typed attributes from an item and keeps the first error.
type reader struct{ err error }

func (r *reader) fail(name, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("attribute %s is missing or not %s", name, want)
	}
}

func (r *reader) str(item map[string]types.AttributeValue, name string) string {
	v, ok := item[name].(*types.AttributeValueMemberS)
	if !ok {
		r.fail(name, "a string")
		return ""
	}
	return v.Value
}

func (r *reader) num(item map[string]types.AttributeValue, name string) int64 {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		r.fail(name, "a number")
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		r.fail(name, "an integer")
	}
	return n
}

func (r *reader) time(item map[string]types.AttributeValue, name string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.str(item, name))
	if err != nil {
		r.fail(name, "an RFC 3339 time")
	}
	return t
}
