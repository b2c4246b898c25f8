// A page of another origin than the API's calls it with fetch, in headless
// Chromium, as a front end served from its own host does: the API allows
// the origin in CORS_ORIGINS (http://127.0.0.1:<QUIRE_ALLOWED_ORIGIN_PORT>,
// which e2e/run.mjs sets) and no other, and the browser enforces it.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Browser } from "puppeteer-core";

import { launch, newPage, servePage } from "./browser.mjs";
import { allowedOriginPort, apiURL, unique } from "./env.mjs";

const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A bookshop front end</title></head>
<body><h1>A bookshop front end</h1><p>Served from its own origin; it calls Quire's API with fetch.</p></body>
</html>
`;

/** What the page saw of one answer. */
interface Seen {
  status: number;
  contentType: string | null;
  headers: Record<string, string | null>;
  body: unknown;
}

/** What the page reports of its visit. */
interface Visit {
  signUp: Seen;
  signUpAgain: Seen;
  login: Seen;
  me: Seen;
  meAgain: Seen;
  cart: Seen;
  cartAgain: Seen;
  missing: Seen;
  pay: Seen;
}

/**
 * A customer's visit, run in the page: every request is the page's fetch,
 * from the page's origin. It must not use anything outside itself, as it
 * runs in the browser.
 */
async function visit(api: string, email: string, keys: { signUp: string; cart: string; pay: string }): Promise<Visit> {
  const exposed = ["ETag", "Location", "Idempotent-Replayed", "WWW-Authenticate", "Retry-After"];
  async function call(method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Seen> {
    const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
    if (init.token !== undefined) {
      headers["Authorization"] = `Bearer ${init.token}`;
    }
    const request: RequestInit = { method, headers, cache: "no-store" };
    if (init.body !== undefined) {
      headers["Content-Type"] = "application/json";
      request.body = JSON.stringify(init.body);
    }
    const res = await fetch(api + path, request);
    const text = await res.text();
    const seen: Seen = { status: res.status, contentType: res.headers.get("Content-Type"), headers: {}, body: text === "" ? null : JSON.parse(text) };
    for (const name of exposed) {
      seen.headers[name] = res.headers.get(name);
    }
    return seen;
  }

  const account = { email, first_name: "Hedy", last_name: "Lamarr", password: "a passphrase typed in a browser" };
  const signUp = await call("POST", "/users", { body: account, headers: { "Idempotency-Key": keys.signUp } });
  const signUpAgain = await call("POST", "/users", { body: account, headers: { "Idempotency-Key": keys.signUp } });
  const login = await call("POST", "/login", { body: { email, password: account.password } });
  const token = (login.body as { access_token: string }).access_token;
  const id = (signUp.body as { id: number }).id;
  const me = await call("GET", `/users/${id}`, { token });
  const meAgain = await call("GET", `/users/${id}`, { token, headers: { "If-None-Match": me.headers["ETag"] ?? "" } });
  const landing = await call("GET", "/landing");
  const book = (landing.body as { featured: { id: number }[] }).featured[0];
  const line = { product_id: book?.id, quantity: 1 };
  const cart = await call("POST", "/cart", { token, body: line, headers: { "Idempotency-Key": keys.cart } });
  const cartAgain = await call("POST", "/cart", { token, body: line, headers: { "Idempotency-Key": keys.cart } });
  const missing = await call("GET", "/products/9007199254740991", { token });
  const pay = await call("POST", "/pay", { token, headers: { "Idempotency-Key": keys.pay } });
  return { signUp, signUpAgain, login, me, meAgain, cart, cartAgain, missing, pay };
}

/** Whether a fetch from the page succeeds: the error's text when it does not. */
async function tryFetch(api: string, path: string, init: RequestInit): Promise<string> {
  try {
    const res = await fetch(api + path, init);
    return `answered ${res.status}`;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}

async function open(browser: Browser, origin: string) {
  const { page, trouble } = await newPage(browser);
  const res = await page.goto(`${origin}/shop`);
  assert.equal(res?.status(), 200, `the page at ${origin}/shop`);
  return { page, trouble };
}

test("a page of an allowed origin signs up, logs in, reads, writes with an idempotency key and reads problems", async (t) => {
  const browser = await launch(t);
  const origin = await servePage(t, html, allowedOriginPort);
  const { page, trouble } = await open(browser, origin);

  const email = `${unique("browser")}@example.com`;
  const keys = { signUp: unique("sign-up"), cart: unique("cart"), pay: unique("pay") };
  let seen: Visit;
  try {
    seen = await page.evaluate(visit, apiURL, email, keys);
  } catch (err) {
    assert.fail(
      `a page of ${origin} could not call the API at ${apiURL} with fetch: is CORS on for CORS_ORIGINS=${origin}? ` +
        `${err instanceof Error ? err.message.split("\n")[0] : String(err)}; ${trouble.join("; ")}`,
    );
  }

  assert.equal(seen.signUp.status, 201, "sign-up");
  const user = seen.signUp.body as { id: number; email: string };
  assert.equal(user.email, email);
  assert.match(seen.signUp.headers["Location"] ?? "", new RegExp(`/users/${user.id}$`), "the page reads Location");
  assert.equal(seen.signUpAgain.status, 201);
  assert.deepEqual(seen.signUpAgain.body, seen.signUp.body, "a replayed sign-up answers the first one");
  assert.equal(seen.signUpAgain.headers["Idempotent-Replayed"], "true", "the page reads Idempotent-Replayed");

  assert.equal(seen.login.status, 200, "login");
  assert.equal((seen.login.body as { token_type: string }).token_type, "Bearer");

  assert.equal(seen.me.status, 200, "GET /users/{id} with the token");
  assert.equal((seen.me.body as { first_name: string }).first_name, "Hedy");
  assert.match(seen.me.headers["ETag"] ?? "", /^"[^"]+"$/, "the page reads ETag");
  assert.equal(seen.meAgain.status, 304, "the page revalidates with If-None-Match");

  assert.equal(seen.cart.status, 200, `POST /cart: ${JSON.stringify(seen.cart.body)}`);
  assert.equal((seen.cart.body as { items: unknown[] }).items.length, 1);
  assert.equal(seen.cartAgain.status, 200);
  assert.deepEqual(seen.cartAgain.body, seen.cart.body);
  assert.equal(seen.cartAgain.headers["Idempotent-Replayed"], "true", "a replayed POST /cart answers the first");

  assert.equal(seen.missing.status, 404);
  assert.match(seen.missing.contentType ?? "", /^application\/problem\+json/);
  assert.deepEqual(
    { type: (seen.missing.body as { type: string }).type, status: (seen.missing.body as { status: number }).status },
    { type: "https://quire.dev/problems/not-found", status: 404 },
  );

  assert.equal(seen.pay.status, 409, `POST /pay with a balance of 0.00: ${JSON.stringify(seen.pay.body)}`);
  assert.match(seen.pay.contentType ?? "", /^application\/problem\+json/);
  const refusal = seen.pay.body as { type: string; status: number; detail?: string };
  assert.equal(refusal.type, "https://quire.dev/problems/insufficient-funds");
  assert.equal(refusal.status, 409);
  assert.ok(refusal.detail, "the page reads the problem's detail");
});

test("a page of an origin the API does not allow cannot read its answers", async (t) => {
  const browser = await launch(t);
  const origin = await servePage(t, html);
  assert.notEqual(origin, `http://127.0.0.1:${allowedOriginPort}`);
  const { page } = await open(browser, origin);

  // A simple request reaches the API, but the browser keeps its answer from
  // the page; a request that needs a preflight is not sent at all.
  const simple = await page.evaluate(tryFetch, apiURL, "/health", {});
  assert.match(simple, /^TypeError: Failed to fetch/, `GET /health from ${origin}`);
  const preflighted = await page.evaluate(tryFetch, apiURL, "/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email: "nobody@example.com", password: "not a password at all" }),
  });
  assert.match(preflighted, /^TypeError: Failed to fetch/, `POST /login from ${origin}`);

  // The same requests from the allowed origin, in the same browser, pass.
  const allowed = await servePage(t, html, allowedOriginPort);
  const { page: allowedPage } = await open(browser, allowed);
  assert.equal(await allowedPage.evaluate(tryFetch, apiURL, "/health", {}), "answered 200", `GET /health from ${allowed}`);
});
