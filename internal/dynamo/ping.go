package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/routes"
)

// Pinger checks that DynamoDB answers with one eventually consistent
// GetItem of a key that never exists: half a read capacity unit, and only
// dynamodb:GetItem on the users table to grant.
type Pinger struct {
	db    *dynamodb.Client
	table string
}

// NewPinger returns a Pinger on db. db should not retry: a health check
// reports the state now, and the caller bounds it with a timeout.
func NewPinger(db *dynamodb.Client, t TableNames) *Pinger {
	return &Pinger{db: db, table: t.Physical(routes.TableUsers)}
}

// Ping returns an error when DynamoDB does not answer GetItem in ctx's time.
func (p *Pinger) Ping(ctx context.Context) error {
	_, err := p.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &p.table,
		Key:       map[string]types.AttributeValue{attrPK: str("health#ping")},
	})
	if err != nil {
		return fmt.Errorf("ping table %s: %w", p.table, err)
	}
	return nil
}
