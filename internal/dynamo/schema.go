// Package dynamo is Quire's DynamoDB adapter: the table definitions shared
// by the CDK stack and DynamoDB Local, the client built from the environment,
// and the stores that turn SDK results and errors into domain values.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// Key is one key attribute: its name and DynamoDB scalar type ("S" or "N").
type Key struct {
	Name string
	Type string
}

// Index is a global secondary index projecting all attributes, or only the
// keys when KeysOnly is set.
type Index struct {
	Name         string
	PartitionKey Key
	SortKey      *Key
	// KeysOnly projects the table's and the index's keys alone: an update
	// of any other attribute then writes nothing to the index.
	KeysOnly bool
}

// Table is the definition of one table. The CDK stack and CreateTables (for
// DynamoDB Local) both build tables from these definitions.
type Table struct {
	Name         string // logical name; the physical name comes from configuration
	PartitionKey Key
	SortKey      *Key
	Indexes      []Index
	// TTL names the attribute whose time (Unix seconds) DynamoDB deletes
	// an item after, if any.
	TTL string
	// Stream is set for a table whose new items are read from its stream
	// (each new item's image).
	Stream bool
}

// Attribute and index names of the users table.
const (
	attrPK       = "pk"
	attrSK       = "sk"
	attrListPK   = "list_pk"
	attrActivePK = "active_pk"
	attrRolePK   = "role_pk"
	attrID       = "id"
	// attrHash is the content hash every stored resource carries: its
	// ETag, and what conditional writes compare.
	attrHash    = "hash"
	indexList   = "list"
	indexActive = "active"
	indexRole   = "role"
	indexByID   = "by_id"
)

// Tables returns the definition of every table Quire uses.
func Tables() []Table {
	return []Table{
		{
			// Users and the email reservations that keep emails unique.
			// Users carry list_pk so that the sparse "list" index holds
			// users only, ordered by id: one Query per page, never a Scan.
			// Active users also carry active_pk, for the "active" index,
			// and role_pk (their role), for the "role" index. The three
			// project keys only: a deposit, a payment, a profile or any
			// content hash change writes nothing to their few partitions,
			// and they hold nothing personal; a page reads its users in
			// one BatchGetItem after the Query.
			Name:         routes.TableUsers,
			PartitionKey: Key{attrPK, "S"},
			Indexes: []Index{
				{Name: indexList, PartitionKey: Key{attrListPK, "S"}, SortKey: &Key{attrID, "N"}, KeysOnly: true},
				{Name: indexActive, PartitionKey: Key{attrActivePK, "S"}, SortKey: &Key{attrID, "N"}, KeysOnly: true},
				{Name: indexRole, PartitionKey: Key{attrRolePK, "S"}, SortKey: &Key{attrID, "N"}, KeysOnly: true},
			},
		},
		{
			// Orders under their buyer, "user#<user id>", by order id:
			// a user's orders are one Query, read consistently. The
			// "by_id" index finds any order by its id, for admins.
			Name:         routes.TableOrders,
			PartitionKey: Key{attrPK, "S"},
			SortKey:      &Key{attrID, "N"},
			Indexes: []Index{
				{Name: indexByID, PartitionKey: Key{attrID, "N"}},
			},
		},
		{
			// Login sessions under their user, "user#<user id>", by
			// "session#<session id>": each with the hash of its live
			// refresh token, deleted by DynamoDB some time after it
			// expires. A user's sessions are one Query.
			Name:         routes.TableSessions,
			PartitionKey: Key{attrPK, "S"},
			SortKey:      &Key{attrSK, "S"},
			TTL:          attrExpiresAt,
		},
		{
			// The first answer to each idempotency key, deleted by
			// DynamoDB some time after it expires.
			Name:         routes.TableIdempotency,
			PartitionKey: Key{attrPK, "S"},
			TTL:          attrExpiresAt,
		},
		{
			// The outbox: each event, "event#<event id>", put in the
			// transaction of the change it reports, its JSON whole, and
			// published from the table's stream; DynamoDB deletes it
			// some days later (eventTTL). It holds ids and amounts,
			// nothing secret.
			Name:         routes.TableEvents,
			PartitionKey: Key{attrPK, "S"},
			TTL:          attrExpiresAt,
			Stream:       true,
		},
		{
			// One item per cart, "cart#<user id>", its books in a map
			// from product id to quantity.
			Name:         routes.TableCarts,
			PartitionKey: Key{attrPK, "S"},
		},
		{
			// The configuration document: a small head item, "config",
			// naming its content hash, and the document gzip-compressed
			// in chunks, "config#<hash>#<n>", so that DynamoDB's 400 KB
			// item limit does not bound it.
			Name:         routes.TableConfig,
			PartitionKey: Key{attrPK, "S"},
		},
		{
			// Authors and products, listed by kind ("kind" index) and
			// products by author ("by_author"), in id order; featured
			// products also sit in the sparse "featured" index, in rank
			// order. "kind" and "featured" have one or two partition key
			// values: they project keys only, so that a price, status,
			// name or content hash change writes nothing to their few
			// partitions (only a new item or a new rank does); a list
			// reads its items in one BatchGetItem after the Query.
			// "by_author" has a partition per author, whose writes are
			// that author's books' changes only: it keeps whole items,
			// and an author's books stay one Query. No index holds
			// anything secret: the catalog has nothing secret.
			Name:         routes.TableCatalog,
			PartitionKey: Key{attrPK, "S"},
			Indexes: []Index{
				{Name: indexFeatured, PartitionKey: Key{attrFeaturedPK, "S"}, SortKey: &Key{attrFeaturedRank, "N"}, KeysOnly: true},
				{Name: indexKind, PartitionKey: Key{attrKind, "S"}, SortKey: &Key{attrID, "N"}, KeysOnly: true},
				{Name: indexByAuthor, PartitionKey: Key{attrAuthorID, "N"}, SortKey: &Key{attrID, "N"}},
			},
		},
	}
}

// CreateTables creates every table under its physical name in names (logical
// name to physical name), on-demand, all at once, and waits until each is
// active. A table that exists already is left as it is. It is for DynamoDB
// Local and tests; deployed tables come from the CDK stack.
func CreateTables(ctx context.Context, db *dynamodb.Client, names TableNames) error {
	var creates []func() error
	for _, t := range Tables() {
		creates = append(creates, func() error { return createTable(ctx, db, t, names.Physical(t.Name)) })
	}
	return quire.Concurrently(creates...)
}

// createTable creates t under name, unless a table has the name, and waits
// until it is active.
func createTable(ctx context.Context, db *dynamodb.Client, t Table, name string) error {
	if _, err := db.CreateTable(ctx, createTableInput(t, name)); err != nil {
		if _, inUse := errors.AsType[*types.ResourceInUseException](err); inUse {
			return nil
		}
		return fmt.Errorf("create table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, maxTableWait); err != nil {
		return fmt.Errorf("wait for table %s: %w", name, err)
	}
	if t.TTL == "" {
		return nil
	}
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &name,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: &t.TTL, Enabled: aws.Bool(true)},
	}); err != nil {
		return fmt.Errorf("time to live of table %s: %w", name, err)
	}
	return nil
}

// Projection is the index's projection type: ALL or KEYS_ONLY.
func (ix Index) Projection() types.ProjectionType {
	if ix.KeysOnly {
		return types.ProjectionTypeKeysOnly
	}
	return types.ProjectionTypeAll
}

func createTableInput(t Table, name string) *dynamodb.CreateTableInput {
	attrs := map[string]string{t.PartitionKey.Name: t.PartitionKey.Type}
	keys := keySchema(t.PartitionKey, t.SortKey, attrs)
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keys,
	}
	if t.Stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	for _, ix := range t.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PartitionKey, ix.SortKey, attrs),
			Projection: &types.Projection{ProjectionType: ix.Projection()},
		})
	}
	for n, typ := range attrs {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(n), AttributeType: types.ScalarAttributeType(typ),
		})
	}
	return in
}

func keySchema(pk Key, sk *Key, attrs map[string]string) []types.KeySchemaElement {
	out := []types.KeySchemaElement{{AttributeName: aws.String(pk.Name), KeyType: types.KeyTypeHash}}
	attrs[pk.Name] = pk.Type
	if sk != nil {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(sk.Name), KeyType: types.KeyTypeRange})
		attrs[sk.Name] = sk.Type
	}
	return out
}

// maxTableWait bounds how long CreateTables waits for one table to be active.
const maxTableWait = 2 * time.Minute

// TableNames maps logical table names to physical ones.
type TableNames map[string]string

// Physical returns the physical name of a logical table: its entry in n, or
// the logical name itself when n has none.
func (n TableNames) Physical(logical string) string {
	if p, ok := n[logical]; ok && p != "" {
		return p
	}
	return logical
}

// TableEnv returns the environment variable that carries a table's physical
// name: USERS_TABLE for "users". The CDK stack sets it on each function.
func TableEnv(logical string) string {
	return strings.ToUpper(logical) + "_TABLE"
}

// TableNamesFromEnv reads every table's physical name from its TableEnv
// variable through getenv; an unset variable leaves the logical name.
func TableNamesFromEnv(getenv func(string) string) TableNames {
	n := TableNames{}
	for _, t := range Tables() {
		if v := getenv(TableEnv(t.Name)); v != "" {
			n[t.Name] = v
		}
	}
	return n
}

// PrefixedTableNames names every table prefix+logical name: how tests keep
// their tables apart in one DynamoDB Local.
func PrefixedTableNames(prefix string) TableNames {
	n := TableNames{}
	for _, t := range Tables() {
		n[t.Name] = prefix + t.Name
	}
	return n
}
