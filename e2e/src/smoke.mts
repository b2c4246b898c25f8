// The smoke suite: one journey through a running Quire, at any URL (a
// deployed stage, or the local server), with the client generated from its
// own OpenAPI documents. `make smoke BASE_URL=https://...` runs it; `make
// test` runs it against the local server, and against a server that
// answers wrongly, which it must fail.
//
// It signs up a customer of its own (smoke+<uuid>@example.com, so that one
// left behind by an interrupted run is easy to find), logs in, browses,
// fills the cart, pays it with an idempotency key and replays the payment,
// revalidates a book (304), reads a problem, sends a CORS preflight, and
// reads API Gateway's own 401 and 404; then it deletes its customer,
// whatever happened. It touches no other data. To pay, the account needs
// money, which only an admin records: with SMOKE_ADMIN_EMAIL and
// SMOKE_ADMIN_PASSWORD it records the book's price; without them, the
// payment must be refused for a short balance, and is replayed so.

import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

import { ok, problem, quire } from "./quire.mjs";

/** An admin's login, to record money received for the smoke's customer. */
export interface Admin {
  email: string;
  password: string;
}

/** A step of the journey that failed: its name, and why. */
export class SmokeFailure extends Error {
  constructor(
    readonly step: string,
    why: string,
  ) {
    super(`${step}: ${why}`);
  }
}

function check(cond: boolean, why: string): void {
  if (!cond) {
    throw new Error(why);
  }
}

/**
 * Runs the journey against the API at baseURL (base path included),
 * calling log with each step that passed; it throws a SmokeFailure at the
 * first that does not.
 */
export async function smoke(baseURL: string, admin?: Admin, log: (step: string) => void = () => {}): Promise<void> {
  const anon = quire(baseURL);
  let step = "";
  const run = async <T,>(name: string, f: () => Promise<T>): Promise<T> => {
    step = name;
    const out = await f();
    log(name);
    return out;
  };
  let cleanup = async (): Promise<void> => {};
  let failure: unknown;
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

    const email = `smoke+${randomUUID()}@example.com`;
    const password = `smoke ${randomUUID()}`;
    const user = await run("sign-up", async () => {
      const created = await anon.POST("/api/v1/users", {
        body: { email, first_name: "Smoke", last_name: "Test", password },
        headers: { "Idempotency-Key": randomUUID() },
      });
      return ok(created, 201);
    });
    const token = await run("login", async () => ok(await anon.POST("/login", { body: { email, password } }), 200).access_token);
    const me = quire(baseURL, token);
    cleanup = async () => {
      const gone = await me.DELETE("/api/v1/users/{id}", { params: { path: { id: user.id } } });
      if (gone.response.status !== 204) {
        throw new SmokeFailure("clean-up", `DELETE /api/v1/users/${user.id} (${email}) answered ${gone.response.status}`);
      }
      log("clean-up");
    };

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
      const cart = ok(await me.POST("/api/v1/cart", { body: { product_id: book.id, quantity: 1 } }), 200);
      check(cart.items.some((i) => i.product_id === book.id), "the book is not in the cart");
    });
    if (admin !== undefined) {
      await run("deposit", async () => {
        const back = quire(baseURL, ok(await anon.POST("/login", { body: admin }), 200).access_token);
        ok(
          await back.POST("/api/v1/users/{id}/deposit", {
            params: { path: { id: user.id } },
            body: { amount: book.price },
            headers: { "Idempotency-Key": randomUUID() },
          }),
          200,
        );
      });
    }
    await run("pay, and its replay", async () => {
      const key = randomUUID();
      const pay = () => me.POST("/api/v1/pay", { headers: { "Idempotency-Key": key } });
      const first = await pay();
      const again = await pay();
      if (admin !== undefined) {
        const order = ok(first, 201);
        check(JSON.stringify(ok(again, 201)) === JSON.stringify(order), "the replayed payment answered another order");
        check(again.response.headers.get("Idempotent-Replayed") === "true", "the replayed payment is not marked Idempotent-Replayed");
      } else {
        const short = problem(first, 409);
        check(short.type === "https://quire.dev/problems/insufficient-funds", `the payment was refused as ${short.type}`);
        check(problem(again, 409).type === short.type, "the replayed payment answered another refusal");
      }
    });
    await run("a problem", async () => {
      const missing = problem(await me.GET("/api/v1/orders/{id}", { params: { path: { id: 1 } } }), 404);
      check(missing.type === "https://quire.dev/problems/not-found" && missing.request_id !== undefined, `404: ${JSON.stringify(missing)}`);
    });
    await run("a CORS preflight", async () => {
      const preflight = await fetch(`${baseURL}/api/v1/cart`, {
        method: "OPTIONS",
        headers: { Origin: "https://smoke.invalid", "Access-Control-Request-Method": "POST" },
      });
      check(preflight.status < 300, `OPTIONS /api/v1/cart answered ${preflight.status}`);
      check(preflight.headers.get("Access-Control-Allow-Origin") === null, "a page of https://smoke.invalid may call the API");
    });
    await run("API Gateway's own 401 and 404", async () => {
      const unauthorized = await fetch(`${baseURL}/api/v1/cart`);
      check(
        unauthorized.status === 401 &&
          unauthorized.headers.get("Content-Type") === "application/problem+json" &&
          (unauthorized.headers.get("WWW-Authenticate") ?? "").startsWith("Bearer"),
        `GET /api/v1/cart without a token answered ${unauthorized.status} ${unauthorized.headers.get("Content-Type")}`,
      );
      const nowhere = await fetch(`${baseURL}/no-such-resource`);
      check(
        nowhere.status === 404 && nowhere.headers.get("Content-Type") === "application/problem+json",
        `GET /no-such-resource answered ${nowhere.status} ${nowhere.headers.get("Content-Type")}`,
      );
    });
  } catch (err) {
    failure = err instanceof SmokeFailure ? err : new SmokeFailure(step, err instanceof Error ? err.message : String(err));
  }
  try {
    await cleanup();
  } catch (err) {
    failure ??= err;
  }
  if (failure !== undefined) {
    throw failure;
  }
}

// Run as a program: node build/e2e/js/smoke.mjs, with BASE_URL.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const baseURL = (process.env.BASE_URL ?? "").replace(/\/$/, "");
  const email = process.env.SMOKE_ADMIN_EMAIL;
  const admin = email ? { email, password: process.env.SMOKE_ADMIN_PASSWORD ?? "" } : undefined;
  if (baseURL === "") {
    console.error("smoke: set BASE_URL to the API's URL, such as https://abc123.execute-api.eu-west-1.amazonaws.com/prod");
    process.exit(2);
  }
  try {
    await smoke(baseURL, admin, (step) => console.log(`smoke: ok   ${step}`));
    console.log(`smoke: ${baseURL} passed`);
  } catch (err) {
    console.error(`smoke: FAIL ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
