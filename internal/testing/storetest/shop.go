package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/orders"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/users"
)

// add decides adding quantity copies of product to c, every book of the
// catalog available: what a store keeps of a cart does not depend on it.
func add(c carts.Cart, product quire.ID, quantity int) (carts.Change, error) {
	books := map[quire.ID]catalog.Product{}
	for _, id := range carts.Books(c, product) {
		books[id] = catalog.Product{ID: id, Status: catalog.StatusAvailable}
	}
	return carts.Add(c, product, quantity, books, 2)
}

// cart stores the cart of user with quantity copies of each of products,
// every book of the catalog available (what a store keeps of a cart does
// not depend on it), and returns it as stored.
func cart(t *testing.T, s Stores, user quire.ID, quantity int, products ...quire.ID) carts.Cart {
	t.Helper()
	books := map[quire.ID]catalog.Product{}
	for _, p := range products {
		books[p] = catalog.Product{ID: p, Status: catalog.StatusAvailable}
		if err := carts.AddTo(t.Context(), s.Carts, user, p, quantity, books); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Carts.Get(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	return *c
}

// payment is u's payment of 1.00 for one book, emptying c when set.
func payment(t *testing.T, u users.User, c *carts.Cart) orders.Payment {
	t.Helper()
	p := orders.Purchase{Cart: c, Total: 1_00, Items: []orders.Item{{ProductID: 1, Name: "Book", Price: 1_00, Quantity: 1, Subtotal: 1_00}}}
	pay, err := orders.Charge(u, p, now())
	if err != nil {
		t.Fatal(err)
	}
	return pay
}

func testPayment(t *testing.T, s Stores) {
	u := user(t, s, 2, quire.RoleCustomer)
	deposit := credit(t, u, 10_00)
	if err := s.Users.CommitDeposit(t.Context(), deposit, nil); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, s, *deposit.Event)
	buyer, err := s.Orders.Buyer(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	c := cart(t, s, 2, 1, 1)
	// The cart changes after it was read: the payment fails whole.
	stale := payment(t, *buyer, &c)
	cart(t, s, 2, 1, 3)
	wantStale(t, s.Orders.CommitPayment(t.Context(), stale, record("pay", 201)), orders.StaleCart)
	if got, _ := s.Orders.Buyer(t.Context(), 2); got.Balance != 10_00 {
		t.Errorf("balance %s after a stale payment, want 10.00", got.Balance)
	}
	if _, err := s.Orders.Get(t.Context(), 2, stale.Order.ID, false); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the order of a stale payment: %v", err)
	}
	if rec, _ := s.Records.Get(t.Context(), "pay"); rec != nil {
		t.Errorf("a stale payment kept its record")
	}
	wantEvents(t, s, *deposit.Event) // and published nothing
	// Read again, it commits: the debit, the order, the emptied cart.
	c = cart(t, s, 2, 0)
	pay := payment(t, *buyer, &c)
	if err := s.Orders.CommitPayment(t.Context(), pay, record("pay", 201)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Orders.Get(t.Context(), 2, pay.Order.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "order", *got, pay.Order, cmp.Comparer(time.Time.Equal))
	if _, err := s.Orders.Get(t.Context(), 3, pay.Order.ID, false); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("user 3 reads user 2's order: %v", err)
	}
	if any, err := s.Orders.Get(t.Context(), 3, pay.Order.ID, true); err != nil || any.ID != pay.Order.ID {
		t.Errorf("an admin reads user 2's order: %v, %v", any, err)
	}
	after := cart(t, s, 2, 0)
	if len(after.Items) != 0 || after.Revision != c.Revision+1 || after.Hash != pay.Cart.Hash {
		t.Errorf("cart after payment: %+v, want empty at revision %d with hash %s", after, c.Revision+1, pay.Cart.Hash)
	}
	// The buyer, read before the payment, is stale now; and the order's id
	// is taken.
	again := payment(t, *buyer, nil)
	wantStale(t, s.Orders.CommitPayment(t.Context(), again, nil), orders.StaleBuyer)
	fresh, _ := s.Orders.Buyer(t.Context(), 2)
	twin := payment(t, *fresh, nil)
	twin.Order = pay.Order
	wantStale(t, s.Orders.CommitPayment(t.Context(), twin, nil), orders.StaleOrder)
	if got, _ := s.Orders.Buyer(t.Context(), 2); got.Balance != 9_00 {
		t.Errorf("balance %s, want 9.00: one payment", got.Balance)
	}
	wantEvents(t, s, *deposit.Event, *pay.Event)
}

func testCarts(t *testing.T, s Stores) {
	user(t, s, 2, quire.RoleCustomer)
	empty, err := s.Carts.Get(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "cart of a user who has none", *empty, carts.Cart{UserID: 2, Items: map[quire.ID]int{}, Hash: quire.ContentHash(&carts.Cart{UserID: 2, Items: map[quire.ID]int{}})})
	first, err := add(*empty, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Carts.Commit(t.Context(), first, nil); err != nil {
		t.Fatal(err)
	}
	// Another change decided on the empty cart: there is a cart now.
	wantStale(t, s.Carts.Commit(t.Context(), first, nil), carts.StaleCart)
	got, _ := s.Carts.Get(t.Context(), 2)
	same(t, "cart", *got, first.Cart)
	second, err := add(*got, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Carts.Commit(t.Context(), second, nil); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Carts.Commit(t.Context(), second, nil), carts.StaleCart)
	got, _ = s.Carts.Get(t.Context(), 2)
	same(t, "cart", *got, second.Cart)
}

func testCatalog(t *testing.T, s Stores) {
	user(t, s, 1, quire.RoleAdmin)
	aw := catalog.NewAuthor(catalog.Author{Name: "Mary Shelley"}, now())
	a := aw.Author
	if err := s.Catalog.CommitAuthor(t.Context(), aw, record("author", 201)); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Catalog.CommitAuthor(t.Context(), aw, nil), catalog.StaleID)
	if err := s.Catalog.CommitAuthor(t.Context(), catalog.NewAuthor(catalog.Author{Name: "Other"}, now()), record("author", 201)); !errors.Is(err, idempotency.ErrRaced) {
		t.Errorf("a second author with one key: %v, want ErrRaced", err)
	}
	w, err := catalog.NewProduct(catalog.Product{Name: "Frankenstein", Price: 12_99, Status: catalog.StatusAvailable, AuthorID: a.ID}, &a, now())
	if err != nil {
		t.Fatal(err)
	}
	p := w.Product
	if err := s.Catalog.CommitProduct(t.Context(), w, nil); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Catalog.CommitProduct(t.Context(), w, nil), catalog.StaleID)
	read, author, err := s.Catalog.Current(t.Context(), p.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "product and author", []any{*read, *author}, []any{p, a})
	rw, err := catalog.Revise(read, author, catalog.Product{ID: p.ID, Name: "Frankenstein", Price: 9_99, Status: catalog.StatusAvailable, AuthorID: a.ID}, 2, quire.Precondition{}, now())
	if err != nil {
		t.Fatal(err)
	}
	revised := rw.Product
	if err := s.Catalog.CommitProduct(t.Context(), rw, nil); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Catalog.CommitProduct(t.Context(), rw, nil), catalog.StaleProduct)
	wantStale(t, s.Catalog.CommitProduct(t.Context(), catalog.ProductWrite{Product: catalog.Product{ID: 99, Name: "None"}, Read: "x"}, nil), catalog.StaleProduct)
	wantEvents(t, s, *aw.Event, *w.Event, *rw.Event)
	byID, err := s.Catalog.ProductsByID(t.Context(), []quire.ID{p.ID, 99})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "products by id", byID, map[quire.ID]catalog.Product{p.ID: revised})
	none, noAuthor, err := s.Catalog.Current(t.Context(), 0, 98)
	if none != nil || noAuthor != nil || err != nil {
		t.Errorf("Current of nothing: %v %v %v", none, noAuthor, err)
	}
}

func testConfig(t *testing.T, s Stores) {
	user(t, s, 1, quire.RoleAdmin)
	if _, err := s.Config.Head(t.Context()); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("head of no document: %v", err)
	}
	doc := func(body string) config.Document {
		d, err := config.Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first, _, err := config.Replace(nil, doc(`{"v":1}`), quire.Precondition{}, "g1", `"1"`, now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Config.Commit(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Config.Commit(t.Context(), first), config.StaleHead)
	h, err := s.Config.Current(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	same(t, "head", h, config.Head{Hash: first.Document.Hash, Size: first.Document.Size, Generation: "g1", Chunks: 1})
	z, err := s.Config.Gzip(t.Context(), h)
	if err != nil || string(z) != string(first.Document.Gzip) {
		t.Errorf("Gzip = %d bytes, %v; want the document's %d", len(z), err, len(first.Document.Gzip))
	}
	second, _, err := config.Replace(&h, doc(`{"v":2}`), quire.Precondition{}, "g2", `"2"`, now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Config.Commit(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Config.Commit(t.Context(), second), config.StaleHead)
	if _, err := s.Config.Gzip(t.Context(), h); !errors.Is(err, config.ErrReplaced) {
		t.Errorf("Gzip of a replaced head: %v, want ErrReplaced", err)
	}
	if h, _ := s.Config.Head(t.Context()); h.Generation != "g2" {
		t.Errorf("head %+v after the second write", h)
	}
	wantEvents(t, s, *first.Event, *second.Event)
}

// ids returns the ids of vs.
func ids[T any](vs []T, id func(T) quire.ID) []quire.ID {
	out := []quire.ID{}
	for _, v := range vs {
		out = append(out, id(v))
	}
	return out
}

func testUserPages(t *testing.T, s Stores) {
	for _, id := range []quire.ID{5, 3, 10, 1, 4} {
		user(t, s, id, map[bool]quire.Role{true: quire.RoleAdmin, false: quire.RoleCustomer}[id == 1])
	}
	u4, _ := s.Users.Get(t.Context(), 4)
	closing, err := users.CloseAccount(*u4, now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Users.CommitClose(t.Context(), closing, nil); err != nil {
		t.Fatal(err)
	}
	userID := func(u users.User) quire.ID { return u.ID }
	for _, c := range []struct {
		q    users.ListQuery
		want []quire.ID
		next quire.ID
	}{
		{users.ListQuery{Limit: 2}, []quire.ID{1, 3}, 3},
		{users.ListQuery{Limit: 2, After: 3}, []quire.ID{5, 10}, 0},
		{users.ListQuery{Limit: 3, After: 1}, []quire.ID{3, 5, 10}, 0},
		{users.ListQuery{Limit: 4, AnyStatus: true}, []quire.ID{1, 3, 4, 5}, 5},
		{users.ListQuery{Limit: 4, AnyStatus: true, After: 5}, []quire.ID{10}, 0},
		{users.ListQuery{Limit: 10, Role: quire.RoleCustomer}, []quire.ID{3, 5, 10}, 0},
		{users.ListQuery{Limit: 10, Role: quire.RoleAdmin, After: 1}, []quire.ID{}, 0},
	} {
		us, next, err := s.Users.List(t.Context(), c.q)
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("page %+v", c.q), []any{ids(us, userID), next}, []any{c.want, c.next})
	}
}

func testCatalogPages(t *testing.T, s Stores) {
	if err := demo.SeedCatalog(t.Context(), s.Catalog); err != nil {
		t.Fatal(err)
	}
	productID := func(p catalog.Product) quire.ID { return p.ID }
	got := func(vs []quire.ID, next quire.ID, err error) []any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return []any{vs, next}
	}
	same(t, "authors", got(s.Catalog.AuthorIDs(t.Context(), catalog.ListQuery{Limit: 2})), []any{[]quire.ID{1, 2}, quire.ID(2)})
	same(t, "authors after 2", got(s.Catalog.AuthorIDs(t.Context(), catalog.ListQuery{Limit: 2, After: 2})), []any{[]quire.ID{3}, quire.ID(0)})
	same(t, "products", got(s.Catalog.ProductIDs(t.Context(), catalog.ListQuery{Limit: 5})), []any{[]quire.ID{1, 2, 3, 4, 5}, quire.ID(0)})
	same(t, "products after 3", got(s.Catalog.ProductIDs(t.Context(), catalog.ListQuery{Limit: 1, After: 3})), []any{[]quire.ID{4}, quire.ID(4)})
	books, next, err := s.Catalog.ProductsOfAuthor(t.Context(), catalog.ListQuery{AuthorID: 2, Limit: 1})
	same(t, "books of author 2", got(ids(books, productID), next, err), []any{[]quire.ID{3}, quire.ID(3)})
	books, next, err = s.Catalog.ProductsOfAuthor(t.Context(), catalog.ListQuery{AuthorID: 2, Limit: 1, After: 3})
	same(t, "books of author 2 after 3", got(ids(books, productID), next, err), []any{[]quire.ID{4}, quire.ID(0)})
	if len(books) == 1 && (books[0].AuthorName != "Jane Austen" || books[0].Hash != quire.ContentHash(&books[0])) {
		t.Errorf("book %+v, want its author's name and its content hash", books[0])
	}
	// The featured books, in rank order (1, 3, 5), a page of two, then
	// the rest.
	first, cursor, err := s.Catalog.FeaturedIDs(t.Context(), nil, 2)
	if err != nil || cursor == nil {
		t.Fatalf("featured: %v, cursor %v, %v", first, cursor, err)
	}
	rest, end, err := s.Catalog.FeaturedIDs(t.Context(), cursor, 2)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "featured books", [][]quire.ID{first, rest}, [][]quire.ID{{1, 3}, {5}})
	if end != nil {
		t.Errorf("cursor after the last featured book: %v, want none", end)
	}
	authors, err := s.Catalog.AuthorsByID(t.Context(), []quire.ID{3, 1, 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(authors) != 2 || authors[3].Name != "Herman Melville" {
		t.Errorf("authors by id: %v", authors)
	}
}

func testOrderPages(t *testing.T, s Stores) {
	for _, id := range []quire.ID{30, 10, 20, 40} {
		if err := s.Orders.PutOrder(t.Context(), orders.Order{ID: id, UserID: 2, Items: []orders.Item{}, Total: 1_00, CreatedAt: now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Orders.PutOrder(t.Context(), orders.Order{ID: 15, UserID: 3, Items: []orders.Item{}, Total: 1_00, CreatedAt: now()}); err != nil {
		t.Fatal(err)
	}
	orderID := func(o orders.Order) quire.ID { return o.ID }
	for _, c := range []struct {
		after quire.ID
		limit int
		want  []quire.ID
		next  quire.ID
	}{
		{0, 3, []quire.ID{10, 20, 30}, 30},
		{30, 3, []quire.ID{40}, 0},
		{0, 4, []quire.ID{10, 20, 30, 40}, 0},
		{40, 4, []quire.ID{}, 0},
	} {
		os, next, err := s.Orders.List(t.Context(), 2, c.after, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("orders after %d", c.after), []any{ids(os, orderID), next}, []any{c.want, c.next})
	}
}

func testGuesses(t *testing.T, s Stores) {
	at := time.Unix(time.Now().Unix(), 0)
	g := login.NewGuess(at)
	g.Limit = 2
	window := time.Unix(g.Until.Unix(), 0)
	for i := 1; i <= 2; i++ {
		a, err := s.Users.Reserve(t.Context(), "Nobody@quire.example", g)
		if err != nil || a.Failures != i || !a.Until.Equal(window) {
			t.Fatalf("guess %d: %+v, %v; want %d in the window to %v", i, a, err, i, window)
		}
	}
	a, err := s.Users.Reserve(t.Context(), "nobody@QUIRE.example", g)
	wantStale(t, err, login.StaleAttempts)
	if a.Failures != 2 || !a.Until.Equal(window) {
		t.Errorf("a guess past the limit: %+v, want the count as stored", a)
	}
	// A restart is refused while the window lives, and starts a new one
	// once it has ended.
	restart := g
	restart.Restart = true
	if _, err := s.Users.Reserve(t.Context(), "nobody@quire.example", restart); err == nil {
		t.Errorf("a restart in a live window counted")
	}
	later := login.NewGuess(g.Until.Add(time.Second))
	later.Restart = true
	a, err = s.Users.Reserve(t.Context(), "nobody@quire.example", later)
	if err != nil || a.Failures != 1 {
		t.Errorf("a restart after the window: %+v, %v", a, err)
	}
	// A guess past an ended window counts nothing: the caller restarts.
	ended := login.NewGuess(later.Until.Add(time.Second))
	if _, err := s.Users.Reserve(t.Context(), "nobody@quire.example", ended); err == nil {
		t.Errorf("a guess in an ended window counted")
	}
}

func testSessions(t *testing.T, s Stores) {
	user(t, s, 2, quire.RoleCustomer)
	if _, err := s.Users.Reserve(t.Context(), "user-2@quire.example", login.NewGuess(now())); err != nil {
		t.Fatal(err)
	}
	start := now()
	sess := login.Session{ID: strings.Repeat("ab", 16), UserID: 2, TokenHash: "t1", Started: start,
		IdleUntil: start.Add(time.Hour), Ends: start.Add(24 * time.Hour)}
	if err := s.Sessions.Start(t.Context(), sess, "user-2@quire.example"); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Sessions.Start(t.Context(), sess, "user-2@quire.example"), login.StaleSession)
	a, err := s.Users.Reserve(t.Context(), "user-2@quire.example", login.NewGuess(now()))
	if err != nil || a.Failures != 1 {
		t.Errorf("a guess after a session started: %+v, %v; want the first of a new count", a, err)
	}
	got, acct, err := s.Sessions.Resume(t.Context(), 2, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "resumed", []any{got, acct}, []any{sess, login.Account{ID: 2, Role: quire.RoleCustomer}}, cmp.Comparer(time.Time.Equal))
	if _, _, err := s.Sessions.Resume(t.Context(), 3, sess.ID); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("another user's session: %v", err)
	}
	if err := s.Sessions.Rotate(t.Context(), sess, "t2", start.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Sessions.Rotate(t.Context(), sess, "t3", start.Add(2*time.Hour)), login.StaleSession)
	ids, more, err := s.Users.Sessions(t.Context(), 2)
	if err != nil || more {
		t.Fatal(ids, more, err)
	}
	same(t, "sessions of user 2", ids, []string{sess.ID})
	if err := s.Sessions.End(t.Context(), 2, sess.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Sessions.End(t.Context(), 2, sess.ID), quire.ENOTFOUND)
	wantCode(t, s.Sessions.Rotate(t.Context(), sess, "t4", start), quire.ENOTFOUND)
}

func testRevision(t *testing.T, s Stores) {
	u := user(t, s, 2, quire.RoleCustomer)
	user(t, s, 3, quire.RoleCustomer)
	read, err := s.Users.Stored(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	taken := u
	taken.Email = "user-3@quire.example"
	rev := users.Revise(read, taken, "", true, now())
	wantStale(t, s.Users.CommitRevision(t.Context(), rev), users.StaleEmail)
	moved := u
	moved.Email = "new@quire.example"
	rev = users.Revise(read, moved, "new-hash", true, now())
	if err := s.Users.CommitRevision(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Users.CommitRevision(t.Context(), rev), users.StaleUser)
	if _, err := s.Users.Account(t.Context(), u.Email); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the old email's account: %v", err)
	}
	acct, err := s.Users.Account(t.Context(), "new@quire.example")
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Users.Stored(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "credentials after a change of email and password",
		[]any{acct.PasswordHash, acct.Epoch, after.PasswordHash, after.Epoch, after.User.Email},
		[]any{"new-hash", rev.Carried.Epoch, "new-hash", rev.Carried.Epoch, "new@quire.example"})
}

// testEpochs: the session epoch login reads (the email's reservation) and
// the one a refresh reads (the user item) stay one, whatever a revision
// changes and whoever makes it: a rename, by the user or an admin, moves
// neither; a new password, role or status moves both.
func testEpochs(t *testing.T, s Stores) {
	u := user(t, s, 2, quire.RoleCustomer)
	user(t, s, 1, quire.RoleAdmin)
	for _, tc := range []struct {
		name     string
		by       quire.ID
		change   func(*users.User)
		password string
		moves    bool
	}{
		{name: "a rename by the user", by: 2, change: func(u *users.User) { u.FirstName = "Augusta" }},
		{name: "a rename by an admin", by: 1, change: func(u *users.User) { u.LastName = "King" }},
		{name: "a new password", by: 2, password: "new-hash", moves: true},
		{name: "a new role by an admin", by: 1, change: func(u *users.User) { u.Role = quire.RoleAdmin }, moves: true},
	} {
		read, err := s.Users.Stored(t.Context(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		changed := read.User
		if tc.change != nil {
			tc.change(&changed)
		}
		rev := users.Revise(read, changed, tc.password, false, now())
		if err := s.Users.CommitRevision(t.Context(), rev); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		acct, err := s.Users.Account(t.Context(), u.Email)
		if err != nil {
			t.Fatal(err)
		}
		after, err := s.Users.Stored(t.Context(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := read.Epoch
		if tc.moves {
			want++
		}
		if acct.Epoch != want || after.Epoch != want {
			t.Errorf("%s: login reads epoch %d, a refresh %d; want both %d", tc.name, acct.Epoch, after.Epoch, want)
		}
	}
}

func testDeletion(t *testing.T, s Stores) {
	u := user(t, s, 2, quire.RoleCustomer)
	cart(t, s, 2, 1, 1)
	start := now()
	sess := login.Session{ID: strings.Repeat("cd", 16), UserID: 2, TokenHash: "t", Started: start, IdleUntil: start.Add(time.Hour), Ends: start.Add(time.Hour)}
	if err := s.Sessions.Start(t.Context(), sess, u.Email); err != nil {
		t.Fatal(err)
	}
	gone, err := users.Deleted(u, 0, now())
	if err != nil {
		t.Fatal(err)
	}
	wantStale(t, s.Users.CommitDelete(t.Context(), users.Deletion{User: users.User{ID: 2, Email: u.Email, Hash: "other"}, Sessions: []string{sess.ID}, Event: gone}), users.StaleUser)
	if _, _, err := s.Sessions.Resume(t.Context(), 2, sess.ID); err != nil {
		t.Errorf("a refused deletion ended a session: %v", err)
	}
	if err := s.Users.CommitDelete(t.Context(), users.Deletion{User: u, Sessions: []string{sess.ID}, Event: gone}); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, s, *gone)
	for what, err := range map[string]error{
		"user":    second(s.Users.Get(t.Context(), 2)),
		"account": second(s.Users.Account(t.Context(), u.Email)),
		"session": third(s.Sessions.Resume(t.Context(), 2, sess.ID)),
	} {
		if quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("the %s of a deleted user: %v, want ENOTFOUND", what, err)
		}
	}
	if c, err := s.Carts.Get(t.Context(), 2); err != nil || len(c.Items) != 0 || c.Revision != 0 {
		t.Errorf("the cart of a deleted user: %+v, %v", c, err)
	}
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }
