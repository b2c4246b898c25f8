// A customer's whole visit, through the client generated from Quire's
// OpenAPI document: sign up, log in, browse, fill a cart, pay once whatever
// the retries, revalidate, and read refusals as the problems the document
// declares. These files compile with tsc --strict against the generated
// types before they run, so a change of the API that breaks generated
// clients (a renamed field, a removed route or status, a problem type that
// changed) fails here.

import assert from "node:assert/strict";
import { test } from "node:test";

import { admin, apiURL, basePath, unique } from "./env.mjs";
import { ok, problem, quire, quireV2, type components } from "./quire.mjs";

type User = components["schemas"]["UserV1"];

/** Cents of a JSON money amount (two decimals), to compare money exactly. */
function cents(amount: number): number {
  return Math.round(amount * 100);
}

interface Customer {
  user: User;
  email: string;
  password: string;
  token: string;
}

/** Signs a new customer up and logs them in. */
async function newCustomer(): Promise<Customer> {
  const anon = quire(apiURL);
  const email = `${unique("e2e")}@example.com`;
  const password = "a long passphrase for the e2e tests";
  const key = unique("sign-up");
  const body = { email, first_name: "Edith", last_name: "Clarke", password };

  const created = await anon.POST("/api/v1/users", { body, headers: { "Idempotency-Key": key } });
  const user = ok(created, 201);
  assert.equal(user.email, email);
  assert.equal(user.role, "customer");
  assert.equal(user.status, "ACTIVE");
  assert.equal(cents(user.balance), 0);
  assert.deepEqual(user._links, {}, "an anonymous caller is offered no action");
  assert.equal(created.response.headers.get("Location"), `${apiURL}/api/v1/users/${user.id}`);

  const login = await anon.POST("/login", { body: { email, password } });
  const token = ok(login, 200);
  assert.equal(token.token_type, "Bearer");
  assert.ok(token.expires_in > 0);
  assert.equal(login.response.headers.get("Cache-Control"), "no-store");
  return { user, email, password, token: token.access_token };
}

/** Logs the demo admin in and records amount received for the user. */
async function deposit(userId: number, amount: number): Promise<User> {
  const login = ok(await quire(apiURL).POST("/login", { body: admin }), 200);
  const backOffice = quire(apiURL, login.access_token);
  return ok(
    await backOffice.POST("/api/v1/users/{id}/deposit", {
      params: { path: { id: userId } },
      body: { amount },
      headers: { "Idempotency-Key": unique("deposit") },
    }),
    200,
  );
}

test("the API is up and answers its health", async () => {
  const health = ok(await quire(apiURL).GET("/health"), 200);
  assert.deepEqual(health, { status: "ok", database: "ok" });
});

test("a sign-up replayed with its idempotency key answers the first sign-up again", async () => {
  const anon = quire(apiURL);
  const key = unique("sign-up");
  const body = {
    email: `${unique("e2e")}@example.com`,
    first_name: "Mary",
    last_name: "Somerville",
    password: "another long passphrase",
  };
  const first = await anon.POST("/api/v1/users", { body, headers: { "Idempotency-Key": key } });
  const again = await anon.POST("/api/v1/users", { body, headers: { "Idempotency-Key": key } });
  assert.deepEqual(ok(again, 201), ok(first, 201));
  assert.equal(again.response.headers.get("Idempotent-Replayed"), "true");
  assert.equal(again.response.headers.get("Location"), first.response.headers.get("Location"));

  const other = await anon.POST("/api/v1/users", {
    body: { ...body, first_name: "Someone else" },
    headers: { "Idempotency-Key": key },
  });
  // The document types each error an operation lists: this 422 can only be key-reused.
  const reused: "https://quire.dev/problems/key-reused" = problem(other, 422).type;
  assert.equal(reused, "https://quire.dev/problems/key-reused");
});

test("a customer signs up, logs in, reads their account in both versions, and browses the catalog", async () => {
  const { user, token } = await newCustomer();
  const me = quire(apiURL, token);

  const v1 = ok(await me.GET("/api/v1/users/{id}", { params: { path: { id: user.id } } }), 200);
  assert.equal(v1.first_name, "Edith");
  assert.equal(v1.last_name, "Clarke");
  assert.deepEqual(v1._links, { close_account: `${basePath}/api/v1/users/${user.id}/close` });

  const v2 = ok(await quireV2(apiURL, token).GET("/api/v2/users/{id}", { params: { path: { id: user.id } } }), 200);
  assert.equal(v2.name, "Edith Clarke");
  assert.ok(!("first_name" in v2), "a v2 user has no first_name");

  const landing = await quire(apiURL).GET("/api/v1/landing");
  const featured = ok(landing, 200).featured;
  assert.ok(featured.length > 0, "the landing page features books");
  assert.match(landing.response.headers.get("Cache-Control") ?? "", /public/);
  for (const book of featured) {
    assert.equal(book.status, "AVAILABLE");
    assert.ok(book.author_name.length > 0);
  }

  const products = ok(await me.GET("/api/v1/products", { params: { query: { limit: 100 } } }), 200);
  const first = featured[0];
  assert.ok(first !== undefined);
  assert.ok(
    products.some((p) => p.id === first.id),
    "the featured books are products",
  );

  const product = ok(await me.GET("/api/v1/products/{id}", { params: { path: { id: first.id } } }), 200);
  assert.equal(product.name, first.name);
  assert.equal(cents(product.price), cents(first.price));
  const rels = product.links.map((l) => l.rel).sort();
  assert.deepEqual(rels, ["author", "buy"]);

  const author = ok(await me.GET("/api/v1/authors/{id}", { params: { path: { id: product.author_id } } }), 200);
  assert.equal(author.name, first.author_name);

  const missing = await me.GET("/api/v1/products/{id}", { params: { path: { id: 9_007_199_254_740_991 } } });
  const notFound: "https://quire.dev/problems/not-found" = problem(missing, 404).type;
  assert.equal(notFound, "https://quire.dev/problems/not-found");
});

test("a customer fills a cart and pays it once, whatever the retries", async () => {
  const { user, token } = await newCustomer();
  const me = quire(apiURL, token);

  const featured = ok(await me.GET("/api/v1/landing"), 200).featured;
  const book = featured[0];
  assert.ok(book !== undefined, "the landing page features a book");

  // An empty cart cannot be paid: a typed refusal, nothing charged.
  const empty = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": unique("pay") } } });
  const cartEmpty = problem(empty, 409);
  // The 409 of POST /pay has exactly its own types: a collision or one of its refusals.
  const payConflicts: Record<typeof cartEmpty.type, string> = {
    "https://quire.dev/problems/conflict": "send it again after Retry-After",
    "https://quire.dev/problems/cart-empty": "add a book first",
    "https://quire.dev/problems/insufficient-funds": "ask the shop to fund the account",
    "https://quire.dev/problems/account-closed": "nothing to do",
    "https://quire.dev/problems/product-unavailable": "take the book out of the cart",
  };
  assert.ok(cartEmpty.type in payConflicts);
  assert.equal(cartEmpty.type, "https://quire.dev/problems/cart-empty" satisfies typeof cartEmpty.type);
  assert.equal(empty.response.headers.get("Retry-After"), null, "a refusal is not worth a retry");

  const added = await me.POST("/api/v1/cart", { body: { product_id: book.id, quantity: 1 } });
  const seen = ok(added, 200);
  assert.equal(seen.items.length, 1);
  const read = await me.GET("/api/v1/cart");
  const seenTag = read.response.headers.get("ETag");
  assert.ok(seenTag, "GET /cart answers an ETag");

  const more = ok(await me.POST("/api/v1/cart", { body: { product_id: book.id, quantity: 1 } }), 200);
  assert.equal(more.items[0]?.quantity, 2);
  assert.equal(cents(more.total), 2 * cents(book.price));

  // The balance is 0.00: a typed refusal that says what to do.
  const short = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": unique("pay") } } });
  const funds = problem(short, 409);
  assert.equal(funds.type, "https://quire.dev/problems/insufficient-funds" satisfies typeof funds.type);
  assert.equal(funds.status, 409);
  assert.ok(funds.detail !== undefined && funds.detail.length > 0, "the problem says how much is missing");

  const funded = await deposit(user.id, 100);
  assert.equal(cents(funded.balance), 100_00);

  // Paying for the cart as it was before the second copy: 412, nothing paid.
  const stale = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": unique("pay"), "If-Match": seenTag } } });
  const precondition: "https://quire.dev/problems/precondition" = problem(stale, 412).type;
  assert.equal(precondition, "https://quire.dev/problems/precondition");

  const current = await me.GET("/api/v1/cart");
  const currentTag = current.response.headers.get("ETag");
  assert.ok(currentTag);
  assert.notEqual(currentTag, seenTag);

  const key = unique("pay");
  const paid = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": key, "If-Match": currentTag } } });
  const order = ok(paid, 201);
  assert.equal(order.user_id, user.id);
  assert.equal(cents(order.total), 2 * cents(book.price));
  assert.deepEqual(
    order.items.map((i) => ({ product_id: i.product_id, quantity: i.quantity })),
    [{ product_id: book.id, quantity: 2 }],
  );
  const location = paid.response.headers.get("Location");
  assert.equal(location, `${apiURL}/api/v1/orders/${order.id}`);
  assert.equal(paid.response.headers.get("Idempotent-Replayed"), null);

  // The client retries, as after a lost answer: the same key gets the same
  // answer, and nothing is charged twice.
  const replayed = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": key, "If-Match": currentTag } } });
  assert.deepEqual(ok(replayed, 201), order);
  assert.equal(replayed.response.headers.get("Idempotent-Replayed"), "true");
  assert.equal(replayed.response.headers.get("Location"), location);

  const after = ok(await me.GET("/api/v1/users/{id}", { params: { path: { id: user.id } } }), 200);
  assert.equal(cents(after.balance), 100_00 - cents(order.total), "the cart was paid once");
  assert.deepEqual(ok(await me.GET("/api/v1/cart"), 200).items, []);
  assert.deepEqual(ok(await me.GET("/api/v1/orders/{id}", { params: { path: { id: order.id } } }), 200), order);

  // A new payment (a new key) finds the cart emptied by the first.
  const twice = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": unique("pay") } } });
  const emptied = problem(twice, 409);
  assert.equal(emptied.type, "https://quire.dev/problems/cart-empty" satisfies typeof emptied.type);
});

test("a client revalidates with If-None-Match and writes only over what it read", async () => {
  const { user, token, email } = await newCustomer();
  const me = quire(apiURL, token);
  const path = { params: { path: { id: user.id } } } as const;

  const read = await me.GET("/api/v1/users/{id}", path);
  const tag = read.response.headers.get("ETag");
  assert.match(tag ?? "", /^"[^"]+-v1"$/);
  // A user is personal data: no cache keeps it, and the client revalidates its own copy.
  assert.equal(read.response.headers.get("Cache-Control"), "no-store");
  assert.equal(read.response.headers.get("X-Content-Type-Options"), "nosniff");

  const fresh = await me.GET("/api/v1/users/{id}", { ...path, headers: { "If-None-Match": tag ?? "" } });
  assert.equal(fresh.response.status, 304, "a matching If-None-Match is 304");
  assert.equal(fresh.data, undefined);
  assert.equal(fresh.response.headers.get("ETag"), tag);
  assert.equal(await fresh.response.text(), "", "a 304 has no body");

  // The back office records a deposit: the account changes, and so its tag.
  await deposit(user.id, 5);
  const changed = await me.GET("/api/v1/users/{id}", { ...path, headers: { "If-None-Match": tag ?? "" } });
  const now = ok(changed, 200);
  assert.equal(cents(now.balance), 5_00);
  assert.notEqual(changed.response.headers.get("ETag"), tag);

  // A replacement that names the tag read before the deposit is refused.
  const write: components["schemas"]["UserWriteV1"] = { email, first_name: "Edie", last_name: "Clarke" };
  const stale = await me.PUT("/api/v1/users/{id}", { ...path, body: write, headers: { "If-Match": tag ?? "" } });
  assert.equal(stale.response.status, 412);
  const refused: "https://quire.dev/problems/precondition" = problem(stale, 412).type;
  assert.equal(refused, "https://quire.dev/problems/precondition");
  assert.equal(ok(await me.GET("/api/v1/users/{id}", path), 200).first_name, "Edith", "nothing changed");

  const current = changed.response.headers.get("ETag") ?? "";
  const put = await me.PUT("/api/v1/users/{id}", { ...path, body: write, headers: { "If-Match": current } });
  assert.equal(ok(put, 200).first_name, "Edie");
  assert.notEqual(put.response.headers.get("ETag"), current);
});

