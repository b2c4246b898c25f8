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

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
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
// once), or ENOTFOUND: one GetItem of the email's reservation, which carries
// what login needs of its user (Create, Replace and Close keep it so, in the
// user's own transactions).
func (s *UserStore) Account(ctx context.Context, email string) (login.Account, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: emailKey(email), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return login.Account{}, fmt.Errorf("get account of an email: %w", err)
	}
	if out.Item == nil {
		return login.Account{}, quire.NotFound("an email's account")
	}
	var r reader
	a := login.Account{ID: quire.ID(r.num(out.Item, "user_id")), Role: quire.Role(r.str(out.Item, "role")),
		Epoch: r.optNum(out.Item, attrEpoch), PasswordHash: r.optStr(out.Item, attrPassword)}
	if r.err != nil {
		return login.Account{}, fmt.Errorf("read email reservation: %w", r.err)
	}
	return a, nil
}

// Reserve counts a guess of email as g says (see login.Guess), in one
// conditional write of the email's count in the sessions table, whose TTL
// is its window's end: an UpdateItem that adds one, or a PutItem that
// starts a window. With nothing written, it returns the count as stored and
// a *quire.Stale naming login.StaleAttempts. A retry after a lost answer
// may count one guess twice: a lock a little early, never a guess more.
func (s *UserStore) Reserve(ctx context.Context, email string, g login.Guess) (login.Attempts, error) {
	now, until := num(g.Now.Unix()), num(g.Until.Unix())
	var err error
	var out map[string]types.AttributeValue
	if g.Restart {
		item := loginKey(email)
		item["failures"], item[attrExpiresAt] = num(1), until
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.sessions, Item: item,
			ConditionExpression:                 aws.String("attribute_not_exists(pk) OR " + attrExpiresAt + " <= :now"),
			ExpressionAttributeValues:           map[string]types.AttributeValue{":now": now},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		out = item
	} else {
		var res *dynamodb.UpdateItemOutput
		res, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:           &s.sessions,
			Key:                 loginKey(email),
			UpdateExpression:    aws.String("ADD failures :one SET " + attrExpiresAt + " = if_not_exists(" + attrExpiresAt + ", :until)"),
			ConditionExpression: aws.String("attribute_not_exists(pk) OR (" + attrExpiresAt + " > :now AND failures < :limit)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":one": num(1), ":now": now, ":until": until, ":limit": num(int64(g.Limit)),
			},
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			out = res.Attributes
		}
	}
	if failed, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		stored, err := attempts(failed.Item)
		if err != nil {
			return login.Attempts{}, err
		}
		return stored, &quire.Stale{What: login.StaleAttempts}
	}
	if err != nil {
		return login.Attempts{}, fmt.Errorf("count a guess of a password: %w", err)
	}
	return attempts(out)
}

// clearGuesses is a transaction's deletion of the guesses counted against
// email, which the right password ends.
func clearGuesses(sessions, email string) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: &sessions, Key: loginKey(email)}}
}

// attempts reads a guess count; none for no item.
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
