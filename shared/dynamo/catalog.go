package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
)

// CatalogStore keeps the catalog in the catalog table: one item per author
// under "author#<id>" and per product under "product#<id>", each with its
// kind for the "kind" index. A product carries its author's name, and a
// featured one its rank in the sparse "featured" index, so that the
// landing page is one Query.
type CatalogStore struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// NewCatalogStore returns a CatalogStore on db with the physical table
// names t.
func NewCatalogStore(db *dynamodb.Client, t TableNames) *CatalogStore {
	return &CatalogStore{db: db, table: t.Physical(routes.TableCatalog), now: time.Now}
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

// Featured returns up to limit available featured books in rank order, in
// one Query of the featured index (which holds only featured products).
func (s *CatalogStore) Featured(ctx context.Context, limit int) ([]catalog.Product, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                &s.table,
		IndexName:                aws.String(indexFeatured),
		KeyConditionExpression:   aws.String(attrFeaturedPK + " = :p"),
		FilterExpression:         aws.String("#status = :available"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": str(featuredBooks), ":available": str(string(catalog.StatusAvailable)),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("query featured books: %w", err)
	}
	ps, err := parseAll(out.Items, parseProduct)
	if len(ps) > limit {
		ps = ps[:limit]
	}
	return ps, err
}

// Author returns the author id, or ENOTFOUND.
func (s *CatalogStore) Author(ctx context.Context, id quire.ID) (*catalog.Author, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: authorKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get author %d: %w", id, err)
	}
	if out.Item == nil {
		return nil, quire.Errorf(quire.ENOTFOUND, "No author has the id %d.", id)
	}
	return parseAuthor(out.Item)
}

// Product returns the product id, or ENOTFOUND.
func (s *CatalogStore) Product(ctx context.Context, id quire.ID) (*catalog.Product, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: productKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get product %d: %w", id, err)
	}
	if out.Item == nil {
		return nil, productNotFound(id)
	}
	return parseProduct(out.Item)
}

// ProductsByID returns the products with ids that exist, in one
// BatchGetItem (more when DynamoDB leaves keys unprocessed).
func (s *CatalogStore) ProductsByID(ctx context.Context, ids []quire.ID) (map[quire.ID]catalog.Product, error) {
	out := map[quire.ID]catalog.Product{}
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = productKey(id)
	}
	items, err := batchGet(ctx, s.db, s.table, "catalog", keys)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		p, err := parseProduct(item)
		if err != nil {
			return nil, err
		}
		out[p.ID] = *p
	}
	return out, nil
}

// Authors returns a page of authors from the kind index (see queryPage).
func (s *CatalogStore) Authors(ctx context.Context, q catalog.ListQuery) ([]catalog.Author, quire.ID, error) {
	as, next, err := queryPage(ctx, s.db, s.pageQuery(indexKind, attrKind, str(kindAuthor), q.After), q.Limit, parseAuthor)
	if err != nil {
		return nil, 0, fmt.Errorf("list authors: %w", err)
	}
	return as, next, nil
}

// Products returns a page of products, or of one author's (see queryPage).
func (s *CatalogStore) Products(ctx context.Context, q catalog.ListQuery) ([]catalog.Product, quire.ID, error) {
	in := s.pageQuery(indexKind, attrKind, str(kindProduct), q.After)
	if q.AuthorID != 0 {
		in = s.pageQuery(indexByAuthor, attrAuthorID, num(int64(q.AuthorID)), q.After)
	}
	ps, next, err := queryPage(ctx, s.db, in, q.Limit, parseProduct)
	if err != nil {
		return nil, 0, fmt.Errorf("list products: %w", err)
	}
	return ps, next, nil
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

// CreateAuthor stores a under a new id.
func (s *CatalogStore) CreateAuthor(ctx context.Context, a *catalog.Author) error {
	return s.create(ctx, &a.ID, func() map[string]types.AttributeValue { return authorItem(*a) })
}

// CreateProduct stores p under a new id, with its author's name.
func (s *CatalogStore) CreateProduct(ctx context.Context, p *catalog.Product) error {
	a, err := s.Author(ctx, p.AuthorID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return catalog.NoSuchAuthor(p.AuthorID)
	}
	if err != nil {
		return err
	}
	p.AuthorName = a.Name
	return s.create(ctx, &p.ID, func() map[string]types.AttributeValue { return productItem(*p, 0) })
}

// create puts the item of a new resource under a new id it sets in *id,
// drawing again if the id is taken, in a transaction that an idempotency
// record can join.
func (s *CatalogStore) create(ctx context.Context, id *quire.ID, item func() map[string]types.AttributeValue) error {
	for range maxIDAttempts {
		*id = quire.NewID(s.now())
		err := transact(ctx, s.db, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
			Put: &types.Put{TableName: &s.table, Item: item(), ConditionExpression: aws.String("attribute_not_exists(pk)")},
		}}})
		switch {
		case cancelled(err)[0]:
			continue
		case err != nil:
			return fmt.Errorf("create catalog item %d: %w", *id, err)
		}
		return nil
	}
	return fmt.Errorf("create catalog item: no free id after %d attempts", maxIDAttempts)
}

// ReplaceProduct stores p's fields over the product p.ID, reading the
// product and its author in one BatchGetItem first, and writing on the
// condition that the product's content hash is still the one read.
func (s *CatalogStore) ReplaceProduct(ctx context.Context, p *catalog.Product, keepArchived bool, pre quire.Precondition) (*catalog.Product, error) {
	out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		s.table: {Keys: []map[string]types.AttributeValue{productKey(p.ID), authorKey(p.AuthorID)}, ConsistentRead: aws.Bool(true)},
	}})
	if err != nil {
		return nil, fmt.Errorf("read product %d and author %d: %w", p.ID, p.AuthorID, err)
	}
	if len(out.UnprocessedKeys) > 0 {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "The catalog is busy; retry after the time in Retry-After.")
	}
	var old *catalog.Product
	var author *catalog.Author
	for _, item := range out.Responses[s.table] {
		var r reader
		if r.str(item, attrKind) == kindAuthor {
			author, err = parseAuthor(item)
		} else {
			old, err = parseProduct(item)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case old == nil:
		return nil, productNotFound(p.ID)
	case author == nil:
		return nil, catalog.NoSuchAuthor(p.AuthorID)
	}
	if err := pre.Check(old.Hash); err != nil {
		return nil, err
	}
	if keepArchived && old.Status == catalog.StatusArchived && p.Status == catalog.StatusDiscontinued {
		p.Status = catalog.StatusArchived
	}
	p.AuthorName = author.Name
	p.Hash = quire.ContentHash(p)
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.table,
		Key:                      productKey(p.ID),
		UpdateExpression:         aws.String("SET #name = :name, price = :price, #status = :status, author_id = :author, author_name = :author_name, #hash = :hash"),
		ConditionExpression:      aws.String("#hash = :old_hash"),
		ExpressionAttributeNames: map[string]string{"#name": "name", "#status": "status", "#hash": attrHash},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":name": str(p.Name), ":price": num(int64(p.Price)), ":status": str(string(p.Status)),
			":author": num(int64(p.AuthorID)), ":author_name": str(p.AuthorName),
			":hash": str(p.Hash), ":old_hash": str(old.Hash),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	switch now, applied, lost := raced(err, p.Hash); {
	case applied:
		return p, nil
	case lost:
		// Changed or deleted since read: gone, failing pre now, or else
		// changed in between.
		if now == nil {
			return nil, productNotFound(p.ID)
		}
		if err := pre.Check(hashOf(now)); err != nil {
			return nil, err
		}
		return nil, quire.Errorf(quire.ECONFLICT, "The product %d changed during the request; retry it.", p.ID)
	case err != nil:
		return nil, fmt.Errorf("replace product %d: %w", p.ID, err)
	}
	return p, nil
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

func productNotFound(id quire.ID) error {
	return quire.Errorf(quire.ENOTFOUND, "No product has the id %d.", id)
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

// Sizes that bound the Query calls of a page: DynamoDB's largest item and
// the data one Query call returns at most.
const (
	maxItemBytes  = 400 << 10
	maxQueryBytes = 1 << 20
)

// maxPageQueries bounds the Query calls of one page of up to 100 items. A
// call stops short only where the next item would take it past 1 MB, so
// every call but the last returns more than 1 MB less one item (over
// 600 KB); the 101 items a page reads hold at most 101 × 400 KB, about
// 40 MB: 64 short calls and the last one.
const maxPageQueries = 101*maxItemBytes/(maxQueryBytes-maxItemBytes) + 1

// queryPage runs in, which must have no filter, for a page of up to limit
// (at most 100) items ordered by id, reading one item more than it returns
// to know whether a next page exists, and parses them; next is the id the
// next page starts after, or 0. A Query call stops at 1 MB: when one
// returns fewer items than asked with a LastEvaluatedKey, queryPage goes
// on from that key, so a page of large items (orders) takes a few calls
// and is never cut short; at most maxPageQueries (65), more is an error.
func queryPage[T any](ctx context.Context, db *dynamodb.Client, in *dynamodb.QueryInput, limit int, parse func(map[string]types.AttributeValue) (*T, error)) ([]T, quire.ID, error) {
	var items []map[string]types.AttributeValue
	for calls := 1; ; calls++ {
		in.Limit = aws.Int32(int32(limit + 1 - len(items)))
		out, err := db.Query(ctx, in)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, out.Items...)
		if len(items) > limit || out.LastEvaluatedKey == nil {
			break
		}
		if calls == maxPageQueries {
			return nil, 0, fmt.Errorf("query a page of %d items: %d items after %d calls", limit, len(items), calls)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	var next quire.ID
	if len(items) > limit {
		items = items[:limit]
		var r reader
		if next = quire.ID(r.num(items[limit-1], attrID)); r.err != nil {
			return nil, 0, r.err
		}
	}
	vs, err := parseAll(items, parse)
	return vs, next, err
}

// parseAll parses every item with parse.
func parseAll[T any](items []map[string]types.AttributeValue, parse func(map[string]types.AttributeValue) (*T, error)) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, item := range items {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}
