package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Catalog serves the catalog from a catalog.Store.
type Catalog struct {
	Store catalog.Store
}

// Routes returns the handler of each catalog route, keyed as in the route
// table.
func (h *Catalog) Routes() rest.Handlers {
	// The catalog is no one's personal data: clients may keep it.
	shared := func(serve rest.HandlerFunc) rest.HandlerFunc {
		return func(w http.ResponseWriter, r *rest.Request) error {
			rest.Shared(w)
			return serve(w, r)
		}
	}
	return rest.Handlers{
		"GET /landing":             h.landing,
		"GET /authors":             shared(h.authors),
		"GET /authors/{id}":        shared(h.author),
		"GET /authors/{id}/books":  shared(h.authorBooks),
		"GET /products":            shared(h.products),
		"GET /products/{id}":       shared(h.product),
		"POST /admin/authors":      h.createAuthor,
		"POST /admin/products":     h.createProduct,
		"PUT /admin/products/{id}": h.replaceProduct,
	}
}

// Link is a link of a catalog item or of a cart's line: its relation and
// the path to follow.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// The links a representation carries: a product's buy (while it is
// available) and author, an author's books, a cart line's product. So
// MaxLinks at most, each of a relation of at most MaxRelLen characters.
const (
	MaxLinks  = 2
	MaxRelLen = len("product")
)

// ProductRep is a product as the API shows it: its status in the request's
// version, and links to buy it (while it is available) and to its author.
type ProductRep struct {
	ID       quire.ID       `json:"id"`
	Name     string         `json:"name"`
	Price    quire.Money    `json:"price"`
	Status   catalog.Status `json:"status"`
	AuthorID quire.ID       `json:"author_id"`
	Links    []Link         `json:"links"`
}

// productRep is p as version v shows it, its links under base, the path
// its request's links start with (see rest.Request.Path).
func productRep(base string, v int, p *catalog.Product) ProductRep {
	links := []Link{}
	if p.Status == catalog.StatusAvailable {
		links = append(links, Link{"buy", base + "/products/" + p.ID.String() + "/buy"})
	}
	links = append(links, Link{"author", base + "/authors/" + p.AuthorID.String()})
	return ProductRep{p.ID, p.Name, p.Price, p.Status.In(v), p.AuthorID, links}
}

// AuthorRep is an author as the API shows it, with a link to their books.
type AuthorRep struct {
	ID    quire.ID `json:"id"`
	Name  string   `json:"name"`
	Links []Link   `json:"links"`
}

// authorRep is a, its link under base (see productRep).
func authorRep(base string, a *catalog.Author) AuthorRep {
	return AuthorRep{a.ID, a.Name, []Link{{"books", base + "/authors/" + a.ID.String() + "/books"}}}
}

// FeaturedBook is a product on the landing page, with its author's name.
type FeaturedBook struct {
	ProductRep
	AuthorName string `json:"author_name"`
}

// Landing is the body of GET /landing.
type Landing struct {
	Featured []FeaturedBook `json:"featured"`
}

// landing answers the landing page's data, public and the same for every
// caller, so caches may keep it for a minute.
func (h *Catalog) landing(w http.ResponseWriter, r *rest.Request) error {
	ps, err := h.Store.Featured(r.Context(), catalog.MaxFeatured)
	if err != nil {
		return err
	}
	books, base := make([]FeaturedBook, len(ps)), r.Path("")
	for i := range ps {
		books[i] = FeaturedBook{productRep(base, r.Version, &ps[i]), ps[i].AuthorName}
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	return rest.JSON(w, r, http.StatusOK, Landing{Featured: books})
}

func listQuery(r *rest.Request) (catalog.ListQuery, error) {
	limit, after, err := rest.ParseIDPage(r.Request)
	return catalog.ListQuery{Limit: limit, After: after}, err
}

func (h *Catalog) authors(w http.ResponseWriter, r *rest.Request) error {
	q, err := listQuery(r)
	if err != nil {
		return err
	}
	as, next, err := h.Store.Authors(r.Context(), q)
	if err != nil {
		return err
	}
	out, base := make([]AuthorRep, len(as)), r.Path("")
	for i := range as {
		out[i] = authorRep(base, &as[i])
	}
	if next != 0 {
		rest.SetNext(w, r.Request, next.String())
	}
	return rest.JSON(w, r, http.StatusOK, out)
}

func (h *Catalog) author(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	a, err := h.Store.Author(r.Context(), id)
	if err != nil {
		return catalog.NoAuthor(err, id)
	}
	rest.SetETag(w, r, a.Hash)
	return rest.JSON(w, r, http.StatusOK, authorRep(r.Path(""), a))
}

func (h *Catalog) products(w http.ResponseWriter, r *rest.Request) error {
	q, err := listQuery(r)
	if err != nil {
		return err
	}
	return h.productPage(w, r, q)
}

// authorBooks answers an author's books, a page at a time; an author
// nobody has is 404 rather than an empty list.
func (h *Catalog) authorBooks(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	q, err := listQuery(r)
	if err != nil {
		return err
	}
	q.AuthorID = id
	return h.productPage(w, r, q)
}

func (h *Catalog) productPage(w http.ResponseWriter, r *rest.Request, q catalog.ListQuery) error {
	ps, next, err := h.Store.Products(r.Context(), q)
	if err != nil {
		return err
	}
	if len(ps) == 0 && q.After == 0 && q.AuthorID != 0 {
		if _, err := h.Store.Author(r.Context(), q.AuthorID); err != nil {
			return catalog.NoAuthor(err, q.AuthorID)
		}
	}
	out, base := make([]ProductRep, len(ps)), r.Path("")
	for i := range ps {
		out[i] = productRep(base, r.Version, &ps[i])
	}
	if next != 0 {
		rest.SetNext(w, r.Request, next.String())
	}
	return rest.JSON(w, r, http.StatusOK, out)
}

func (h *Catalog) product(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	p, err := h.Store.Product(r.Context(), id)
	if err != nil {
		return catalog.NoProduct(err, id)
	}
	rest.SetETag(w, r, p.Hash)
	return rest.JSON(w, r, http.StatusOK, productRep(r.Path(""), r.Version, p))
}

// createAuthor stores a new author under a new id, drawn again when
// another write took it in the same millisecond.
func (h *Catalog) createAuthor(w http.ResponseWriter, r *rest.Request) error {
	var f catalog.AuthorFields
	if err := rest.Decode(r.Request, &f); err != nil {
		return err
	}
	a, err := f.Author()
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		aw := catalog.NewAuthor(*a, time.Now())
		rec, err := r.Created("/authors/"+aw.Author.ID.String(), authorRep(r.Path(""), &aw.Author))
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, h.Store.CommitAuthor(r.Context(), aw, rec)); !again {
			return catalog.Created(err)
		}
	}
}

// createProduct stores a new product of an existing author under a new id,
// drawn again when another write took it in the same millisecond.
func (h *Catalog) createProduct(w http.ResponseWriter, r *rest.Request) error {
	var f catalog.ProductFields
	if err := rest.Decode(r.Request, &f); err != nil {
		return err
	}
	p, err := f.Product(r.Version)
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		_, author, err := h.Store.Current(r.Context(), 0, p.AuthorID)
		if err != nil {
			return err
		}
		pw, err := catalog.NewProduct(*p, author, time.Now())
		if err != nil {
			return err
		}
		rec, err := r.Created("/products/"+pw.Product.ID.String(), productRep(r.Path(""), r.Version, &pw.Product))
		if err != nil {
			return err
		}
		if again, err := quire.Retry(r.Context(), n, h.Store.CommitProduct(r.Context(), pw, rec)); !again {
			return catalog.Created(err)
		}
	}
}

// replaceProduct replaces a product's fields, archiving included (v2): it
// reads the product and its author, decides, and commits, again when the
// product changed meanwhile, which checks If-Match again. A v1 client that
// writes back the DISCONTINUED it read of an archived product leaves it
// archived.
func (h *Catalog) replaceProduct(w http.ResponseWriter, r *rest.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var f catalog.ProductFields
	if err := rest.Decode(r.Request, &f); err != nil {
		return err
	}
	p, err := f.Product(r.Version)
	if err != nil {
		return err
	}
	pre, err := rest.Precondition(r.Request)
	if err != nil {
		return err
	}
	p.ID = id
	for n := 1; ; n++ {
		read, author, err := h.Store.Current(r.Context(), p.ID, p.AuthorID)
		if err != nil {
			return err
		}
		pw, err := catalog.Revise(read, author, *p, r.Version, pre, time.Now())
		if err != nil {
			return err
		}
		again, err := quire.Retry(r.Context(), n, h.Store.CommitProduct(r.Context(), pw, nil))
		if again {
			continue
		}
		if _, stale := errors.AsType[*quire.Stale](err); stale {
			return quire.Errorf(quire.ECONFLICT, "The product %d changed during the request; retry it.", p.ID)
		}
		if err != nil {
			return err
		}
		rest.SetETag(w, r, pw.Product.Hash)
		return rest.JSON(w, r, http.StatusOK, productRep(r.Path(""), r.Version, &pw.Product))
	}
}
