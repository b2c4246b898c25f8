// The smoke suite: one journey through a running Quire, at any URL (a
// deployed stage, or the local server), with the client generated from its
// own OpenAPI documents. `make smoke BASE_URL=https://...` runs it; `make
// test` runs it against the local server, with and without an admin, and
// against servers that answer wrongly, which it must fail.
//
// It signs up a customer of its own (smoke+<uuid>@example.com, so that one
// left behind is easy to find) with an idempotency key and replays the
// sign-up, logs in, browses, revalidates a book (304), fills the cart,
// pays, reads a problem, sends CORS preflights, and reads API Gateway's own
// 401 and 404. To pay, the account needs money, which only an admin
// records: with SMOKE_ADMIN_EMAIL and SMOKE_ADMIN_PASSWORD it records the
// book's price, pays with an idempotency key and replays the payment (the
// order stays, as orders do); without them, the payment must be refused
// for a short balance. SMOKE_ORIGIN names an origin the stage allows, whose
// preflight must then be allowed.
//
// Whatever step fails once the sign-up is sent, it deletes its customer
// (logging in as it when the journey had not, or as the admin), and ends
// the admin's session it opened; what it could not clean up it names in
// its failure, for an operator to delete. Its customer's order, payment
// and deposit stay with the deleted account; it changes nothing else.

import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

import { ok, problem, quire } from "./quire.mjs";

/** An admin's login, to record money received for the smoke's customer. */
export interface Admin {
  email: string;
  password: string;
}

/** What the journey may use beyond the API's URL. */
export interface Options {
  /** An admin's login (SMOKE_ADMIN_EMAIL, SMOKE_ADMIN_PASSWORD): the payment is then funded, made and replayed. */
  admin?: Admin | undefined;
  /** An origin the API allows (SMOKE_ORIGIN), such as https://shop.example.com: its preflight must be allowed. */
  origin?: string | undefined;
}

/**
 * A step of the journey that failed: its name, and why. cleanup says what
 * the clean-up could not do after it (an account left behind, a session
 * left open), each for an operator to finish.
 */
export class SmokeFailure extends Error {
  constructor(
    readonly step: string,
    readonly why: string,
    readonly cleanup: readonly string[] = [],
  ) {
    super([`${step}: ${why}`, ...cleanup.map((c) => `clean-up: ${c}`)].join("; "));
  }
}

/** The prefix of Quire's problem types. */
const problemTypes = "https://quire.dev/problems/";

function check(cond: boolean, why: string): void {
  if (!cond) {
    throw new Error(why);
  }
}

/** The comma-separated values of a header, lowercase. */
function tokens(h: Headers, name: string): string[] {
  return (h.get(name) ?? "")
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== "");
}

/**
 * Checks that res, an answer API Gateway makes itself, is the problem of
 * kind with status: problem+json whose body has that type, a title and
 * the status of the answer.
 */
async function gatewayProblem(what: string, res: Response, status: number, kind: string): Promise<void> {
  const contentType = res.headers.get("Content-Type");
  const text = await res.text();
  check(res.status === status && contentType === "application/problem+json", `${what} answered ${res.status} ${contentType}: ${text}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${what} answered ${status} with a body that is not JSON: ${text}`);
  }
  const p = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  check(
    p.type === problemTypes + kind && typeof p.title === "string" && p.title !== "" && p.status === status,
    `${what} answered ${status} with a problem lacking type ${problemTypes + kind}, a title or status ${status}: ${text}`,
  );
}

/**
 * Runs the journey against the API at baseURL (base path included),
 * calling log with each step that passed; it throws a SmokeFailure at the
 * first that does not, after cleaning up.
 */
export async function smoke(baseURL: string, options: Options = {}, log: (step: string) => void = () => {}): Promise<void> {
  const { admin } = options;
  const anon = quire(baseURL);
  let step = "";
  const run = async <T,>(name: string, f: () => Promise<T>): Promise<T> => {
    step = name;
    const out = await f();
    log(name);
    return out;
  };

  const email = `smoke+${randomUUID()}@example.com`;
  const password = `smoke ${randomUUID()}`;
  // What the clean-up undoes: set as soon as each exists.
  let signUpSent = false;
  let userId: number | undefined;
  let token: string | undefined; // the customer's
  let inCart: number | undefined; // a book the cart holds, unpaid
  let adminToken: string | undefined;
  const backOffice = async (): Promise<string> => {
    adminToken ??= ok(await anon.POST("/login", { body: admin! }), 200).access_token;
    return adminToken;
  };

  let failure: SmokeFailure | undefined;
  try {
    await run("health", async () => {
      const health = ok(await anon.GET("/health"), 200);
      check(health.status === "ok", `GET /health says ${JSON.stringify(health)}`);
    });
    await run("the docs page", async () => {
      const page = await fetch(`${baseURL}/docs`);
      check(page.status === 200 && (page.headers.get("Content-Type") ?? "").startsWith("text/html"), `GET /docs answered ${page.status}`);
      const root = await fetch(`${baseURL}/`, { redirect: "manual" });
      check(root.status === 302 && (root.headers.get("Location") ?? "").endsWith("/docs"), `GET / answered ${root.status}, not the way to /docs`);
    });

    await run("sign-up, and its replay", async () => {
      const key = randomUUID();
      const signUp = () =>
        anon.POST("/api/v1/users", {
          body: { email, first_name: "Smoke", last_name: "Test", password },
          headers: { "Idempotency-Key": key },
        });
      signUpSent = true;
      const first = await signUp();
      const user = ok(first, 201);
      userId = user.id;
      check(user.email === email, `POST /api/v1/users answered the user ${user.email}, not ${email}`);
      check(first.response.headers.get("Idempotent-Replayed") === null, "the first sign-up is marked Idempotent-Replayed");
      const again = await signUp();
      const replayed = ok(again, 201);
      check(again.response.headers.get("Idempotent-Replayed") === "true", "the replayed sign-up is not marked Idempotent-Replayed: true");
      check(replayed.id === user.id, `the replayed sign-up answered user ${replayed.id}, not the first's ${user.id}: a second account`);
      check(JSON.stringify(replayed) === JSON.stringify(user), "the replayed sign-up answered another body than the first");
      check(
        again.response.headers.get("Location") === first.response.headers.get("Location"),
        `the replayed sign-up's Location is ${again.response.headers.get("Location")}, the first's ${first.response.headers.get("Location")}`,
      );
    });
    token = await run("login", async () => ok(await anon.POST("/login", { body: { email, password } }), 200).access_token);
    const me = quire(baseURL, token);

    const book = await run("browse", async () => {
      ok(await anon.GET("/api/v1/landing"), 200);
      const books = ok(await me.GET("/api/v1/products", { params: { query: { limit: 20 } } }), 200);
      const available = books.find((b) => b.status === "AVAILABLE");
      check(available !== undefined, "GET /api/v1/products lists no available book");
      return available!;
    });
    await run("conditional GET", async () => {
      const read = await me.GET("/api/v1/products/{id}", { params: { path: { id: book.id } } });
      ok(read, 200);
      const tag = read.response.headers.get("ETag") ?? "";
      check(tag !== "", `GET /api/v1/products/${book.id} has no ETag`);
      const again = await me.GET("/api/v1/products/{id}", { params: { path: { id: book.id } }, headers: { "If-None-Match": tag } });
      check(again.response.status === 304, `a GET with If-None-Match of its ETag answered ${again.response.status}, not 304`);
    });
    await run("cart", async () => {
      inCart = book.id;
      const cart = ok(await me.POST("/api/v1/cart", { body: { product_id: book.id, quantity: 1 } }), 200);
      check(cart.items.some((i) => i.product_id === book.id), "the book is not in the cart");
    });
    if (admin !== undefined) {
      await run("deposit", async () => {
        ok(
          await quire(baseURL, await backOffice()).POST("/api/v1/users/{id}/deposit", {
            params: { path: { id: userId! } },
            body: { amount: book.price },
            headers: { "Idempotency-Key": randomUUID() },
          }),
          200,
        );
      });
      await run("pay, and its replay", async () => {
        const key = randomUUID();
        const pay = () => me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": key } } });
        const first = await pay();
        const order = ok(first, 201);
        inCart = undefined;
        const again = await pay();
        check(JSON.stringify(ok(again, 201)) === JSON.stringify(order), "the replayed payment answered another order");
        check(again.response.headers.get("Idempotent-Replayed") === "true", "the replayed payment is not marked Idempotent-Replayed: true");
      });
    } else {
      // A refusal is not recorded for its key (only an effect is), so
      // sending it again would replay nothing: the sign-up's replay is
      // this path's check of idempotency.
      await run("pay: refused for a short balance", async () => {
        const refused = await me.POST("/api/v1/pay", { params: { header: { "Idempotency-Key": randomUUID() } } });
        const short = problem(refused, 409);
        check(short.type === `${problemTypes}insufficient-funds`, `the payment was refused as ${short.type}, not for a short balance`);
        check(refused.response.headers.get("Retry-After") === null, "the refusal for a short balance has a Retry-After: no retry fixes it");
      });
    }
    await run("a problem", async () => {
      const missing = problem(await me.GET("/api/v1/orders/{id}", { params: { path: { id: 1 } } }), 404);
      check(missing.type === `${problemTypes}not-found` && missing.request_id !== undefined, `404: ${JSON.stringify(missing)}`);
    });
    await run("CORS preflights", async () => {
      // A function answers every preflight (rest.CORS.Handler): 204 with
      // Allow; for an allowed origin, that origin in
      // Access-Control-Allow-Origin (* is accepted too) with the methods,
      // headers and max age, and Vary: Origin on every answer once any
      // origin is allowed. No answer allows credentials: tokens travel in
      // Authorization, never in cookies.
      const preflight = async (origin: string) => {
        const res = await fetch(`${baseURL}/api/v1/cart`, {
          method: "OPTIONS",
          headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,idempotency-key" },
        });
        const what = `the preflight of POST /api/v1/cart from ${origin}`;
        check(res.status === 204, `${what} answered ${res.status}, not 204`);
        check(tokens(res.headers, "Allow").includes("post"), `${what} has Allow: ${res.headers.get("Allow")}, without POST`);
        check(res.headers.get("Access-Control-Allow-Credentials") === null, `${what} allows credentials, which Quire never does`);
        return { res, what, allowed: res.headers.get("Access-Control-Allow-Origin") };
      };
      if (options.origin !== undefined) {
        const { res, what, allowed } = await preflight(options.origin);
        check(
          allowed === options.origin || allowed === "*",
          `${what} has Access-Control-Allow-Origin ${allowed}: the API does not allow that origin (SMOKE_ORIGIN)`,
        );
        if (allowed !== "*") {
          check(tokens(res.headers, "Vary").includes("origin"), `${what} has Vary: ${res.headers.get("Vary")}, without Origin`);
        }
        check(tokens(res.headers, "Access-Control-Allow-Methods").includes("post"), `${what} does not allow POST: ${res.headers.get("Access-Control-Allow-Methods")}`);
        const headers = tokens(res.headers, "Access-Control-Allow-Headers");
        check(
          headers.includes("authorization") && headers.includes("idempotency-key"),
          `${what} does not allow Authorization and Idempotency-Key: ${res.headers.get("Access-Control-Allow-Headers")}`,
        );
        check(Number(res.headers.get("Access-Control-Max-Age")) > 0, `${what} has no Access-Control-Max-Age`);
      }
      // An origin no stage names (.invalid is reserved): refused, unless
      // the stage allows any origin (quire:corsOrigins=*), when it is
      // named, as any origin is, or answered *; never with credentials.
      const foreign = "https://smoke.invalid";
      const { res, what, allowed } = await preflight(foreign);
      check(allowed === null || allowed === foreign || allowed === "*", `${what} has Access-Control-Allow-Origin ${allowed}`);
      if (allowed === foreign || (allowed === null && options.origin !== undefined)) {
        check(tokens(res.headers, "Vary").includes("origin"), `${what} has Vary: ${res.headers.get("Vary")}, without Origin, and the answer depends on it`);
      }
      if (allowed === null) {
        check(res.headers.get("Access-Control-Allow-Methods") === null, `${what} is refused, yet lists Access-Control-Allow-Methods`);
      }
    });
    await run("API Gateway's own 401 and 404", async () => {
      const unauthorized = await fetch(`${baseURL}/api/v1/cart`);
      check(
        (unauthorized.headers.get("WWW-Authenticate") ?? "").startsWith("Bearer"),
        `GET /api/v1/cart without a token answered ${unauthorized.status} without a Bearer challenge`,
      );
      await gatewayProblem("GET /api/v1/cart without a token", unauthorized, 401, "unauthorized");
      await gatewayProblem("GET /no-such-resource", await fetch(`${baseURL}/no-such-resource`), 404, "not-found");
    });
  } catch (err) {
    failure = err instanceof SmokeFailure ? err : new SmokeFailure(step, err instanceof Error ? err.message : String(err));
  }

  const left: string[] = [];
  if (signUpSent) {
    try {
      await deleteCustomer();
    } catch (err) {
      const id = userId === undefined ? "" : ` (id ${userId})`;
      left.push(
        `the customer ${email}${id} is left behind: ${err instanceof Error ? err.message : String(err)}; ` +
          `an admin deletes it with DELETE /api/v1/users/${userId ?? "<its id>"}`,
      );
    }
  }
  if (adminToken !== undefined) {
    try {
      const out = await quire(baseURL, adminToken).DELETE("/session");
      check(out.response.status === 204, `DELETE /session answered ${out.response.status}`);
    } catch (err) {
      left.push(
        `the admin's session it opened is still open (${err instanceof Error ? err.message : String(err)}); ` +
          `it ends when its refresh token expires, or when ${admin!.email} logs out`,
      );
    }
  }
  if (failure !== undefined) {
    throw new SmokeFailure(failure.step, failure.why, left);
  }
  if (left.length > 0) {
    throw new SmokeFailure("clean-up", left.join("; "));
  }
  if (signUpSent) {
    log("clean-up");
  }

  /**
   * Deletes the customer: as itself (logging in when the journey had not),
   * else as the admin; first taking the unpaid book out of its cart.
   */
  async function deleteCustomer(): Promise<void> {
    let as = token;
    let own = true; // deleting its own account, which takes its password
    if (as === undefined) {
      const login = await anon.POST("/login", { body: { email, password } });
      if (login.response.status === 401 && userId === undefined) {
        return; // the sign-up created no account
      }
      if (login.data !== undefined) {
        as = login.data.access_token;
      } else if (admin !== undefined && userId !== undefined) {
        as = await backOffice();
        own = false;
      } else {
        throw new Error(`it could not log in (POST /login answered ${login.response.status})`);
      }
    }
    const client = quire(baseURL, as);
    if (userId === undefined) {
      // The sign-up's answer was lost: the account is the caller's own.
      const mine = ok(await client.GET("/api/v1/users"), 200).find((u) => u.email === email);
      if (mine === undefined) {
        return;
      }
      userId = mine.id;
    }
    if (inCart !== undefined && as === token) {
      const out = await client.DELETE("/api/v1/cart/items/{product_id}", { params: { path: { product_id: inCart } } });
      check(out.response.status === 204, `DELETE /api/v1/cart/items/${inCart} answered ${out.response.status}`);
    }
    const path = { params: { path: { id: userId } } };
    let gone = await client.DELETE("/api/v1/users/{id}", own ? { ...path, body: { current_password: password } } : path);
    if (own && gone.response.status === 409 && admin !== undefined) {
      // Money left on the account (a deposit no payment spent): one's own
      // account goes only at a zero balance, and the back office deletes a
      // funded one.
      gone = await quire(baseURL, await backOffice()).DELETE("/api/v1/users/{id}", path);
    }
    check(gone.response.status === 204, `DELETE /api/v1/users/${userId} answered ${gone.response.status}`);
  }
}

// Run as a program: node build/e2e/js/smoke.mjs, with BASE_URL, and
// SMOKE_ADMIN_EMAIL, SMOKE_ADMIN_PASSWORD and SMOKE_ORIGIN when given.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const baseURL = (process.env.BASE_URL ?? "").replace(/\/$/, "");
  const email = process.env.SMOKE_ADMIN_EMAIL;
  const admin = email ? { email, password: process.env.SMOKE_ADMIN_PASSWORD ?? "" } : undefined;
  const origin = process.env.SMOKE_ORIGIN ? process.env.SMOKE_ORIGIN.replace(/\/$/, "") : undefined;
  if (baseURL === "") {
    console.error("smoke: set BASE_URL to the API's URL, such as https://abc123.execute-api.eu-west-1.amazonaws.com/prod");
    process.exit(2);
  }
  try {
    await smoke(baseURL, { admin, origin }, (step) => console.log(`smoke: ok   ${step}`));
    console.log(`smoke: ${baseURL} passed`);
  } catch (err) {
    if (err instanceof SmokeFailure) {
      console.error(`smoke: FAIL ${err.step}: ${err.why}`);
      for (const c of err.cleanup) {
        console.error(`smoke: FAIL clean-up: ${c}`);
      }
    } else {
      console.error(`smoke: FAIL ${err instanceof Error ? err.message : String(err)}`);
    }
    process.exit(1);
  }
}
