package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/quire"
)

// Bounds on attempts: of a create whose new id was taken, and of a change
// that finds its item changed between its read and its write.
const (
	maxIDAttempts    = 4
	maxWriteAttempts = 5
)

// maxConflictAttempts bounds how often transact runs a transaction that
// DynamoDB cancelled for a conflict with another one.
const maxConflictAttempts = 5

// transact runs a transaction, again after a short random pause when
// DynamoDB cancels it only because another transaction was writing the
// same items: concurrent requests then all land, in some order. A
// transaction still conflicting after maxConflictAttempts is ECONFLICT.
func transact(ctx context.Context, db *dynamodb.Client, in *dynamodb.TransactWriteItemsInput) error {
	for attempt := 1; ; attempt++ {
		_, err := db.TransactWriteItems(ctx, in)
		if !conflicted(err) {
			return err
		}
		if attempt == maxConflictAttempts {
			return quire.Errorf(quire.ECONFLICT, "Other requests are changing the same data; retry in a moment.")
		}
		pause := time.Duration(attempt*10+rand.IntN(20)) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// conflicted reports whether err is a transaction cancelled for a conflict
// with another transaction, with no condition failing.
func conflicted(err error) bool {
	tce, ok := errors.AsType[*types.TransactionCanceledException](err)
	if !ok {
		return false
	}
	conflict := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "TransactionConflict":
			conflict = true
		case "ConditionalCheckFailed":
			return false
		}
	}
	return conflict
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
