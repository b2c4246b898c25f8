package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/shared/catalog"
	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/routes"
)

// CatalogStore keeps the catalog in the catalog table: one item per author
// under "author#<id>" and per product under "product#<id>". A featured
// product carries featured_pk and its rank, and its author's name, so that
// the sparse "featured" index answers the landing page in one Query.
type CatalogStore struct {
	db    *dynamodb.Client
	table string
}

// NewCatalogStore returns a CatalogStore on db with the physical table
// names t.
func NewCatalogStore(db *dynamodb.Client, t TableNames) *CatalogStore {
	return &CatalogStore{db: db, table: t.Physical(routes.TableCatalog)}
}

// Attribute and index names of the catalog table.
const (
	attrFeaturedPK   = "featured_pk"
	attrFeaturedRank = "featured_rank"
	indexFeatured    = "featured"
	featuredBooks    = "book"
	authorPrefix     = "author#"
	productPrefix    = "product#"
)

// Featured returns up to limit featured books in rank order, in one Query.
func (s *CatalogStore) Featured(ctx context.Context, limit int) ([]catalog.FeaturedBook, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(indexFeatured),
		KeyConditionExpression:    aws.String(attrFeaturedPK + " = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": str(featuredBooks)},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("query featured books: %w", err)
	}
	books := make([]catalog.FeaturedBook, 0, len(out.Items))
	for _, item := range out.Items {
		var r reader
		b := catalog.FeaturedBook{
			Product: catalog.Product{
				ID:       quire.ID(r.num(item, attrID)),
				Name:     r.str(item, "name"),
				Price:    quire.Money(r.num(item, "price")),
				Status:   catalog.Status(r.str(item, "status")),
				AuthorID: quire.ID(r.num(item, "author_id")),
			},
			AuthorName: r.str(item, "author_name"),
		}
		if r.err != nil {
			return nil, fmt.Errorf("read product item %v: %w", item[attrPK], r.err)
		}
		books = append(books, b)
	}
	return books, nil
}

// PutAuthor stores a, replacing any author with its id.
func (s *CatalogStore) PutAuthor(ctx context.Context, a catalog.Author) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: map[string]types.AttributeValue{
		attrPK: str(authorPrefix + a.ID.String()), attrID: num(int64(a.ID)), "name": str(a.Name),
	}})
	if err != nil {
		return fmt.Errorf("put author %d: %w", a.ID, err)
	}
	return nil
}

// PutProduct stores p, replacing any product with its id; a rank above 0
// features it on the landing page with its author's name.
func (s *CatalogStore) PutProduct(ctx context.Context, p catalog.Product, author catalog.Author, rank int) error {
	item := map[string]types.AttributeValue{
		attrPK: str(productPrefix + p.ID.String()), attrID: num(int64(p.ID)), "name": str(p.Name),
		"price": num(int64(p.Price)), "status": str(string(p.Status)), "author_id": num(int64(p.AuthorID)),
		"author_name": str(author.Name),
	}
	if rank > 0 {
		item[attrFeaturedPK], item[attrFeaturedRank] = str(featuredBooks), num(int64(rank))
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return fmt.Errorf("put product %d: %w", p.ID, err)
	}
	return nil
}
