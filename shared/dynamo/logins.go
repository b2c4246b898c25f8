package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/login"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/users"
)

// loginKey is the key of an email's failed-login count in the sessions
// table: the email's SHA-256, so that emails nobody has are not stored as
// they were typed.
func loginKey(email string) map[string]types.AttributeValue {
	sum := sha256.Sum256([]byte(users.EmailKey(email)))
	return map[string]types.AttributeValue{attrPK: str("login#" + hex.EncodeToString(sum[:])), attrSK: str("failures")}
}

// Account returns the id, role, password hash and session epoch of the user
// with email, read consistently (a user who just signed up can log in at
// once), or ENOTFOUND; and the email's failed logins, whether it has a user
// or not: one BatchGetItem of the email's reservation, which carries what
// login needs of its user (Create, Replace and Close keep it so, in the
// user's own transactions), and of the failed-login count. An email nobody
// has costs the same single request.
func (s *UserStore) Account(ctx context.Context, email string) (login.Account, login.Attempts, error) {
	items, err := batchGetTables(ctx, s.db, "login", map[string]types.KeysAndAttributes{
		s.table:    {Keys: []map[string]types.AttributeValue{emailKey(email)}, ConsistentRead: aws.Bool(true)},
		s.sessions: {Keys: []map[string]types.AttributeValue{loginKey(email)}, ConsistentRead: aws.Bool(true)},
	})
	if err != nil {
		return login.Account{}, login.Attempts{}, fmt.Errorf("get account of an email: %w", err)
	}
	var tries login.Attempts
	if got := items[s.sessions]; len(got) > 0 {
		if tries, err = attempts(got[0]); err != nil {
			return login.Account{}, login.Attempts{}, err
		}
	}
	got := items[s.table]
	if len(got) == 0 {
		return login.Account{}, tries, quire.NotFound("an email's account")
	}
	var r reader
	a := login.Account{ID: quire.ID(r.num(got[0], "user_id")), Role: quire.Role(r.str(got[0], "role")),
		Epoch: r.optNum(got[0], attrEpoch), PasswordHash: r.optStr(got[0], attrPassword)}
	if r.err != nil {
		return login.Account{}, tries, fmt.Errorf("read email reservation: %w", r.err)
	}
	return a, tries, nil
}

// FailedLogin counts a failed login of email at now: one more in the
// current window, or the first of a new window of login.LoginWindow when
// there is none or it has passed (its item then waits for DynamoDB's TTL).
// Each write is conditioned on the window it meets, so that concurrent
// failures at a window's end all count, in one window, rather than each
// starting a window of its own. It returns the failures counted, this one
// included. A retry after a lost answer may count one failure twice: a lock
// a little early, never a guess more.
func (s *UserStore) FailedLogin(ctx context.Context, email string, now time.Time) (login.Attempts, error) {
	until := num(now.Add(login.LoginWindow).Unix())
	for range maxWriteAttempts {
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &s.sessions,
			Key:                       loginKey(email),
			UpdateExpression:          aws.String("ADD failures :one SET " + attrExpiresAt + " = if_not_exists(" + attrExpiresAt + ", :until)"),
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR " + attrExpiresAt + " > :now"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1), ":now": num(now.Unix()), ":until": until},
			ReturnValues:              types.ReturnValueAllNew,
		})
		if _, passed := errors.AsType[*types.ConditionalCheckFailedException](err); !passed {
			if err != nil {
				return login.Attempts{}, fmt.Errorf("count a failed login: %w", err)
			}
			return attempts(out.Attributes)
		}
		// The window has passed: start a new one, unless another failure
		// just did, whose window this one then joins.
		item := loginKey(email)
		item["failures"], item[attrExpiresAt] = num(1), until
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.sessions, Item: item,
			ConditionExpression:       aws.String(attrExpiresAt + " <= :now"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
		})
		if _, joined := errors.AsType[*types.ConditionalCheckFailedException](err); !joined {
			if err != nil {
				return login.Attempts{}, fmt.Errorf("count a failed login: %w", err)
			}
			return attempts(item)
		}
	}
	return login.Attempts{}, &quire.Stale{What: login.StaleAttempts}
}

// unlocked is a transaction's check that email is not locked at now (see
// login.Attempts.Check). A change that the account's password proves
// commits with it, so that a locked email's right password is refused as
// its wrong ones are, without a read of the count before the change.
func (s *UserStore) unlocked(email string, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.sessions, Key: loginKey(email),
		ConditionExpression: aws.String("attribute_not_exists(pk) OR failures < :max OR " + attrExpiresAt + " <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":max": num(login.MaxLoginFailures), ":now": num(now.Unix()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// attempts reads a failed-login count; none for no item.
func attempts(item map[string]types.AttributeValue) (login.Attempts, error) {
	if item == nil {
		return login.Attempts{}, nil
	}
	var r reader
	a := login.Attempts{Failures: int(r.num(item, "failures")), Until: time.Unix(r.num(item, attrExpiresAt), 0)}
	if r.err != nil {
		return login.Attempts{}, fmt.Errorf("read failed logins: %w", r.err)
	}
	return a, nil
}

// ClearLogins forgets email's failed logins.
func (s *UserStore) ClearLogins(ctx context.Context, email string) error {
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.sessions, Key: loginKey(email)}); err != nil {
		return fmt.Errorf("clear failed logins: %w", err)
	}
	return nil
}
