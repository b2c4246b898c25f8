package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
)

// CatalogStore keeps the catalog in the catalog table: one item per author
// under "author#<id>" and per product under "product#<id>", each with its
// kind for the "kind" index. A product carries its author's name, and a
// featured one its rank in the sparse "featured" index. The "kind" and
// "featured" indexes hold keys only (see Tables): a list is a Query of
// keys, then one BatchGetItem of the items. It reads DynamoDB every time:
// the functions read it through cache.Catalog, which keeps, for the
// instance, what every user reads.
type CatalogStore struct {
	db                     *dynamodb.Client
	table, records, events string
	now                    func() time.Time
}

// NewCatalogStore returns a CatalogStore on db with the physical table
// names t, which reads DynamoDB every time.
func NewCatalogStore(db *dynamodb.Client, t TableNames) *CatalogStore {
	return &CatalogStore{db: db, table: t.Physical(routes.TableCatalog), records: t.Physical(routes.TableIdempotency),
		events: t.Physical(routes.TableEvents), now: time.Now}
}

// Attribute, index and key names of the catalog table.
const (
	attrFeaturedPK   = "featured_pk"
	attrFeaturedRank = "featured_rank"
	attrKind         = "kind"
	attrAuthorID     = "author_id"
	indexFeatured    = "featured"
	indexKind        = "kind"
	indexByAuthor    = "by_author"
	featuredBooks    = "book"
	kindAuthor       = "author"
	kindProduct      = "product"
	authorPrefix     = "author#"
	productPrefix    = "product#"
)

func authorKey(id quire.ID) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(authorPrefix + id.String())}
}

func productKey(id quire.ID) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(productPrefix + id.String())}
}

// FeaturedIDs reads up to limit ids of featured books in rank order from
// the featured index (one Query), from the cursor from (nil: the first,
// else a cursor it returned), and the cursor after them (nil: no more).
func (s *CatalogStore) FeaturedIDs(ctx context.Context, from any, limit int) ([]quire.ID, any, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(indexFeatured),
		KeyConditionExpression:    aws.String(attrFeaturedPK + " = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": str(featuredBooks)},
		Limit:                     aws.Int32(int32(limit)),
	}
	if from != nil {
		in.ExclusiveStartKey = from.(map[string]types.AttributeValue)
	}
	got, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("query featured books: %w", err)
	}
	ids := make([]quire.ID, len(got.Items))
	for i, item := range got.Items {
		if ids[i], err = productIDOf(item); err != nil {
			return nil, nil, err
		}
	}
	if got.LastEvaluatedKey == nil {
		return ids, nil, nil
	}
	return ids, got.LastEvaluatedKey, nil
}

// productIDOf reads the id of a product from its key, "product#<id>": all
// a keys-only item of the featured index has of it.
func productIDOf(item map[string]types.AttributeValue) (quire.ID, error) {
	var r reader
	pk := r.str(item, attrPK)
	id, err := strconv.ParseInt(strings.TrimPrefix(pk, productPrefix), 10, 64)
	if r.err != nil || err != nil || !strings.HasPrefix(pk, productPrefix) {
		return 0, fmt.Errorf("read featured index item %v: not a product's key", item[attrPK])
	}
	return quire.ID(id), nil
}

// ProductsByID reads the products ids that exist, consistently: one GetItem
// for one id, one BatchGetItem for more (again for keys DynamoDB leaves
// unprocessed).
func (s *CatalogStore) ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error) {
	return s.readProducts(ctx, ids)
}

// AuthorsByID reads the authors ids that exist, as ProductsByID does.
func (s *CatalogStore) AuthorsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, error) {
	return s.readAuthors(ctx, ids)
}

// readProducts reads the products ids that exist, consistently: one
// GetItem for one id, one BatchGetItem for more.
func (s *CatalogStore) readProducts(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error) {
	return readByID(ctx, s, ids, "product", productKey, parseProduct, func(p *catalog.Product) quire.ID { return p.ID })
}

// readAuthors reads the authors ids that exist, as readProducts does.
func (s *CatalogStore) readAuthors(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Author, error) {
	return readByID(ctx, s, ids, "author", authorKey, parseAuthor, func(a *catalog.Author) quire.ID { return a.ID })
}

// readByID reads the items of ids (of what: "product") that exist, with
// key and parse, by idOf: one consistent GetItem for one id, one
// BatchGetItem for more.
func readByID[T any](ctx context.Context, s *CatalogStore, ids []quire.ID, what string, key func(quire.ID) map[string]types.AttributeValue,
	parse func(map[string]types.AttributeValue) (*T, error), idOf func(*T) quire.ID) (map[quire.ID]T, error) {
	out := make(map[quire.ID]T, len(ids))
	var items []map[string]types.AttributeValue
	switch len(ids) {
	case 0:
		return out, nil
	case 1:
		got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(ids[0]), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("get %s %d: %w", what, ids[0], err)
		}
		if got.Item != nil {
			items = append(items, got.Item)
		}
	default:
		keys := make([]map[string]types.AttributeValue, len(ids))
		for i, id := range ids {
			keys[i] = key(id)
		}
		var err error
		if items, err = batchGet(ctx, s.db, s.table, "catalog", keys); err != nil {
			return nil, err
		}
	}
	for _, item := range items {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		out[idOf(v)] = *v
	}
	return out, nil
}

// AuthorIDs reads a page of authors' ids from the kind index (see
// queryPage), and the id the next page starts after, or 0.
func (s *CatalogStore) AuthorIDs(ctx context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error) {
	return queryPage(ctx, s.db, s.pageQuery(indexKind, attrKind, str(kindAuthor), q.After), q.Limit, parseKey)
}

// ProductIDs reads a page of products' ids, as AuthorIDs does.
func (s *CatalogStore) ProductIDs(ctx context.Context, q catalog.ListQuery) ([]quire.ID, quire.ID, error) {
	return queryPage(ctx, s.db, s.pageQuery(indexKind, attrKind, str(kindProduct), q.After), q.Limit, parseKey)
}

// ProductsOfAuthor reads a page of q.AuthorID's books from the by_author
// index, which holds the products whole.
func (s *CatalogStore) ProductsOfAuthor(ctx context.Context, q catalog.ListQuery) ([]catalog.Product, quire.ID, error) {
	return queryPage(ctx, s.db, s.pageQuery(indexByAuthor, attrAuthorID, num(int64(q.AuthorID)), q.After), q.Limit, parseProduct)
}

// pageQuery queries index, whose partition key is key = value, for the
// items after the id after.
func (s *CatalogStore) pageQuery(index, key string, value types.AttributeValue, after quire.ID) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#p = :p AND id > :after"),
		ExpressionAttributeNames:  map[string]string{"#p": key},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": value, ":after": num(int64(after))},
	}
}

// Current reads the product id (none when 0) and the author authorID,
// consistently, in one request: a GetItem for one, a BatchGetItem for
// both.
func (s *CatalogStore) Current(ctx context.Context, id, authorID quire.ID) (*catalog.Product, *catalog.Author, error) {
	keys := []map[string]types.AttributeValue{authorKey(authorID)}
	if id != 0 {
		keys = append(keys, productKey(id))
	}
	var items []map[string]types.AttributeValue
	if len(keys) == 1 {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keys[0], ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, nil, fmt.Errorf("get author %d: %w", authorID, err)
		}
		if out.Item != nil {
			items = append(items, out.Item)
		}
	} else {
		var err error
		if items, err = batchGet(ctx, s.db, s.table, "catalog", keys); err != nil {
			return nil, nil, err
		}
	}
	var (
		p   *catalog.Product
		a   *catalog.Author
		err error
	)
	for _, item := range items {
		var r reader
		if r.str(item, attrKind) == kindAuthor {
			a, err = parseAuthor(item)
		} else {
			p, err = parseProduct(item)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return p, a, nil
}

// CommitAuthor stores the new author a with rec in one transaction, under
// an id no item has.
func (s *CatalogStore) CommitAuthor(ctx context.Context, w catalog.AuthorWrite, rec *idempotency.Record) error {
	return s.create(ctx, w.Author.ID, authorItem(w.Author), w.Event, rec)
}

// CommitProduct stores w and its event in one transaction: a new product with rec, under an id no item has,
// when w.Read is ""; else its fields over the product whose content hash
// is w.Read (a PUT, which takes no idempotency key).
func (s *CatalogStore) CommitProduct(ctx context.Context, w catalog.ProductWrite, rec *idempotency.Record) error {
	p := w.Product
	if w.Read == "" {
		return s.create(ctx, p.ID, productItem(p, 0), w.Event, rec)
	}
	var t tx
	t = append(t, named{catalog.StaleProduct, types.TransactWriteItem{Update: &types.Update{
		TableName:                &s.table,
		Key:                      productKey(p.ID),
		UpdateExpression:         aws.String("SET #name = :name, price = :price, #status = :status, author_id = :author, author_name = :author_name, #hash = :hash"),
		ConditionExpression:      aws.String("#hash = :read"),
		ExpressionAttributeNames: map[string]string{"#name": "name", "#status": "status", "#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":name": str(p.Name), ":price": num(int64(p.Price)), ":status": str(string(p.Status)),
			":author": num(int64(p.AuthorID)), ":author_name": str(p.AuthorName),
			":hash": str(p.Hash), ":read": str(w.Read),
		},
	}}})
	t = append(t, published(s.events, w.Event)...)
	t = append(t, published(s.events, w.AlsoChanged)...)
	if err := commit(ctx, s.db, t, "", nil); err != nil {
		return fmt.Errorf("replace product %d: %w", p.ID, err)
	}
	return nil
}

// create puts the item of a new author or product, id, with rec and ev, in
// one transaction on the condition that no item has its id.
func (s *CatalogStore) create(ctx context.Context, id quire.ID, item map[string]types.AttributeValue, ev *quire.Event, rec *idempotency.Record) error {
	var t tx
	t = append(t, named{catalog.StaleID, types.TransactWriteItem{Put: &types.Put{
		TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}})
	t = append(t, published(s.events, ev)...)
	if err := commit(ctx, s.db, t, s.records, rec); err != nil {
		return fmt.Errorf("create catalog item %d: %w", id, err)
	}
	return nil
}

// PutAuthor stores a, replacing any author with its id: for demo data.
func (s *CatalogStore) PutAuthor(ctx context.Context, a catalog.Author) error {
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: authorItem(a)}); err != nil {
		return fmt.Errorf("put author %d: %w", a.ID, err)
	}
	return nil
}

// PutProduct stores p, replacing any product with its id, for demo data; a
// rank above 0 features it on the landing page.
func (s *CatalogStore) PutProduct(ctx context.Context, p catalog.Product, rank int) error {
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: productItem(p, rank)}); err != nil {
		return fmt.Errorf("put product %d: %w", p.ID, err)
	}
	return nil
}

// authorItem is the item of a, with its content hash.
func authorItem(a catalog.Author) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: str(authorPrefix + a.ID.String()), attrKind: str(kindAuthor), attrID: num(int64(a.ID)), "name": str(a.Name),
		attrHash: str(quire.ContentHash(&a)),
	}
}

// productItem is the item of p, with its content hash.
func productItem(p catalog.Product, rank int) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		attrPK: str(productPrefix + p.ID.String()), attrKind: str(kindProduct), attrID: num(int64(p.ID)), attrHash: str(quire.ContentHash(&p)),
		"name": str(p.Name), "price": num(int64(p.Price)), "status": str(string(p.Status)),
		attrAuthorID: num(int64(p.AuthorID)), "author_name": str(p.AuthorName),
	}
	if rank > 0 {
		item[attrFeaturedPK], item[attrFeaturedRank] = str(featuredBooks), num(int64(rank))
	}
	return item
}

func parseAuthor(item map[string]types.AttributeValue) (*catalog.Author, error) {
	var r reader
	a := &catalog.Author{ID: quire.ID(r.num(item, attrID)), Name: r.str(item, "name"), Hash: r.str(item, attrHash)}
	if r.err != nil {
		return nil, fmt.Errorf("read author item %v: %w", item[attrPK], r.err)
	}
	return a, nil
}

func parseProduct(item map[string]types.AttributeValue) (*catalog.Product, error) {
	var r reader
	p := &catalog.Product{
		ID:         quire.ID(r.num(item, attrID)),
		Name:       r.str(item, "name"),
		Price:      quire.Money(r.num(item, "price")),
		Status:     catalog.Status(r.str(item, "status")),
		AuthorID:   quire.ID(r.num(item, attrAuthorID)),
		AuthorName: r.str(item, "author_name"),
		Hash:       r.str(item, attrHash),
	}
	if r.err != nil {
		return nil, fmt.Errorf("read product item %v: %w", item[attrPK], r.err)
	}
	return p, nil
}
