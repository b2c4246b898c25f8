package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// SessionStore keeps login sessions in the sessions table, under their
// user ("user#<id>", "session#<id>"), each with the hash of its live refresh
// token and a TTL at its expiry. It implements login.Sessions.
type SessionStore struct {
	db       *dynamodb.Client
	sessions string
	users    string
}

// NewSessionStore returns the sessions of the tables t names.
func NewSessionStore(db *dynamodb.Client, t TableNames) *SessionStore {
	return &SessionStore{db: db, sessions: t.Physical(routes.TableSessions), users: t.Physical(routes.TableUsers)}
}

// attrEpoch is the users' session epoch: every change that ends a user's
// sessions adds one.
const attrEpoch = "session_epoch"

func sessionKey(user quire.ID, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str("user#" + user.String()), attrSK: str("session#" + id)}
}

// Start stores s, which must be new, and deletes the guesses counted
// against email, in one transaction (see tx.commit: a retry after a lost
// answer applies nothing again and succeeds).
func (st *SessionStore) Start(ctx context.Context, s login.Session, email string) error {
	item := sessionKey(s.UserID, s.ID)
	item[attrHash] = str(s.TokenHash)
	item[attrEpoch] = num(s.Epoch)
	item["started"] = str(s.Started.UTC().Format(time.RFC3339Nano))
	item["idle_until"] = str(s.IdleUntil.UTC().Format(time.RFC3339Nano))
	item["ends"] = str(s.Ends.UTC().Format(time.RFC3339Nano))
	item[attrExpiresAt] = num(s.Expiry().Unix())
	var t tx
	t = append(t, named{login.StaleSession, types.TransactWriteItem{Put: &types.Put{
		TableName: &st.sessions, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}})
	t = append(t, named{login.StaleAttempts, clearGuesses(st.sessions, email)})
	if err := commit(ctx, st.db, t, "", nil); err != nil {
		return fmt.Errorf("start a session of user %d: %w", s.UserID, err)
	}
	return nil
}

// Resume reads the session id of user and the user's role and session
// epoch in one consistent BatchGetItem: ENOTFOUND when either is missing.
func (st *SessionStore) Resume(ctx context.Context, user quire.ID, id string) (login.Session, login.Account, error) {
	items, err := batchGetTables(ctx, st.db, "session", map[string]types.KeysAndAttributes{
		st.sessions: {Keys: []map[string]types.AttributeValue{sessionKey(user, id)}, ConsistentRead: aws.Bool(true)},
		st.users: {
			Keys: []map[string]types.AttributeValue{userKey(user)}, ConsistentRead: aws.Bool(true),
			ProjectionExpression:     aws.String("#role, #status, " + attrEpoch),
			ExpressionAttributeNames: map[string]string{"#role": "role", "#status": "status"},
		},
	})
	if err != nil {
		return login.Session{}, login.Account{}, err
	}
	if len(items[st.sessions]) == 0 || len(items[st.users]) == 0 {
		return login.Session{}, login.Account{}, quire.NotFound("session of user " + user.String())
	}
	item, u := items[st.sessions][0], items[st.users][0]
	var r reader
	s := login.Session{
		ID: id, UserID: user, TokenHash: r.str(item, attrHash), Epoch: r.num(item, attrEpoch),
		Started: r.time(item, "started"), IdleUntil: r.time(item, "idle_until"), Ends: r.time(item, "ends"),
	}
	role := users.LoginRole(quire.Role(r.str(u, "role")), users.Status(r.str(u, "status")))
	acct := login.Account{ID: user, Role: role, Epoch: r.optNum(u, attrEpoch)}
	if r.err != nil {
		return login.Session{}, login.Account{}, fmt.Errorf("read session of user %d: %w", user, r.err)
	}
	return s, acct, nil
}

// Rotate puts next in place of s's token hash, and moves its idle expiry
// to idleUntil, if the hash is still s's: a *quire.Stale naming
// login.StaleSession when another request rotated it first, or is ending
// it (End's transaction on the item kept refusing the write, through the
// client's retries), ENOTFOUND when the session is gone. A retry of the
// write whose answer was lost finds next stored, and succeeds.
func (st *SessionStore) Rotate(ctx context.Context, s login.Session, next string, idleUntil time.Time) error {
	s.IdleUntil = idleUntil
	_, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &st.sessions,
		Key:                      sessionKey(s.UserID, s.ID),
		UpdateExpression:         aws.String("SET #hash = :next, idle_until = :idle, " + attrExpiresAt + " = :expires"),
		ConditionExpression:      aws.String("#hash = :hash"),
		ExpressionAttributeNames: map[string]string{"#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":next": str(next), ":hash": str(s.TokenHash),
			":idle": str(idleUntil.UTC().Format(time.RFC3339Nano)), ":expires": num(s.Expiry().Unix()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if _, ending := errors.AsType[*types.TransactionConflictException](err); ending {
		return &quire.Stale{What: login.StaleSession}
	}
	switch now, applied, lost := raced(err, next); {
	case applied:
		return nil
	case lost && now == nil:
		return quire.NotFound("session of user " + s.UserID.String())
	case lost:
		return &quire.Stale{What: login.StaleSession}
	case err != nil:
		return fmt.Errorf("rotate a session of user %d: %w", s.UserID, err)
	}
	return nil
}

// End deletes the session id of user: ENOTFOUND if there is none. It is a
// transaction of one item, whose ClientRequestToken makes a retry after a
// lost answer succeed, where a plain DeleteItem would find nothing and say
// ENOTFOUND.
func (st *SessionStore) End(ctx context.Context, user quire.ID, id string) error {
	var t tx
	t = append(t, named{login.StaleSession, types.TransactWriteItem{
		Delete: &types.Delete{TableName: &st.sessions, Key: sessionKey(user, id), ConditionExpression: aws.String("attribute_exists(pk)")},
	}})
	err := commit(ctx, st.db, t, "", nil)
	if _, gone := errors.AsType[*quire.Stale](err); gone {
		return quire.NotFound("session of user " + user.String())
	}
	if err != nil {
		return fmt.Errorf("end a session of user %d: %w", user, err)
	}
	return nil
}

// sessionKeys returns the keys of up to limit sessions of user id in
// table, in one Query, and whether it has more.
func sessionKeys(ctx context.Context, db *dynamodb.Client, table string, id quire.ID, limit int32) ([]map[string]types.AttributeValue, bool, error) {
	out, err := db.Query(ctx, &dynamodb.QueryInput{
		TableName: &table, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(userPrefix + id.String())},
		ProjectionExpression:      aws.String("pk, sk"), ConsistentRead: aws.Bool(true), Limit: &limit,
	})
	if err != nil {
		return nil, false, fmt.Errorf("list sessions of user %d: %w", id, err)
	}
	return out.Items, out.LastEvaluatedKey != nil, nil
}

// endSessions deletes the sessions of user id from table: Query pages of
// their keys, each deleted by DeleteKeys.
func endSessions(ctx context.Context, db *dynamodb.Client, table string, id quire.ID) error {
	in := &dynamodb.QueryInput{
		TableName: &table, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(userPrefix + id.String())},
		ProjectionExpression:      aws.String("pk, sk"), ConsistentRead: aws.Bool(true),
	}
	for {
		out, err := db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("list sessions of user %d: %w", id, err)
		}
		if err := DeleteKeys(ctx, db, table, out.Items); err != nil {
			return fmt.Errorf("delete sessions of user %d: %w", id, err)
		}
		if out.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
