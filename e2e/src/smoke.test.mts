// The smoke suite (smoke.mts) passes against the local server, with an
// admin (the payment funded and replayed) and, as `make smoke` runs it in
// the pipeline, without one; and it fails, naming the step, against
// servers that answer wrongly: one that answers every request 200 with {},
// one that drops If-None-Match, one that lets any page send credentials.
// It passes against a stage that allows any origin, cleans up a customer
// whose login failed, and says which account it left when it cannot. The
// command (node smoke.mjs, what `make smoke` runs) is run as a user runs
// it: exit status 0 and its steps, or 1 and `smoke: FAIL <step>: why`.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { admin, allowedOriginPort, apiURL } from "./env.mjs";
import { quire } from "./quire.mjs";
import { smoke, SmokeFailure } from "./smoke.mjs";

/** The origin the local server allows (its CORS_ORIGINS). */
const origin = `http://127.0.0.1:${allowedOriginPort}`;

type Handle = (req: IncomingMessage, body: Buffer) => Promise<Response>;

/** Serves handle on a free port of 127.0.0.1 until the test ends, and returns its URL with apiURL's base path. */
async function serve(t: { after: (f: () => void) => void }, handle: Handle): Promise<string> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const r = await handle(req, Buffer.concat(chunks));
      const headers: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding") {
          headers[k] = v;
        }
      });
      const body = Buffer.from(await r.arrayBuffer());
      res.writeHead(r.status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${new URL(apiURL).pathname.replace(/\/$/, "")}`;
}

/** Sends req on to the local server (less the headers drop names), and returns its answer. */
function forward(req: IncomingMessage, body: Buffer, drop: string[] = [], set: Record<string, string> = {}): Promise<Response> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string" && k !== "host" && k !== "connection" && !drop.includes(k)) {
      headers.set(k, v);
    }
  }
  for (const [k, v] of Object.entries(set)) {
    headers.set(k, v);
  }
  return fetch(new URL(apiURL).origin + (req.url ?? "/"), {
    method: req.method ?? "GET",
    headers,
    redirect: "manual",
    ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
  });
}

/** A copy of res with its headers changed by edit. */
async function edited(res: Response, edit: (h: Headers) => void): Promise<Response> {
  const headers = new Headers(res.headers);
  edit(headers);
  return new Response(res.status === 204 || res.status === 304 ? null : await res.arrayBuffer(), { status: res.status, headers });
}

/**
 * A stage that allows any origin (quire:corsOrigins=*), as rest.CORS
 * answers then: each preflight is the allowed origin's, naming the origin
 * asked for; credentials too when withCredentials.
 */
function allowAny(withCredentials: boolean): Handle {
  return async (req, body) => {
    const asked = req.headers.origin;
    if (req.method !== "OPTIONS" || asked === undefined) {
      return forward(req, body);
    }
    return edited(await forward(req, body, [], { Origin: origin }), (h) => {
      if (h.get("Access-Control-Allow-Origin") !== null) {
        h.set("Access-Control-Allow-Origin", asked);
        if (withCredentials) {
          h.set("Access-Control-Allow-Credentials", "true");
        }
      }
    });
  };
}

/** A server that answers POST /login with a 503 problem while fail() says so, and forwards the rest. */
function failingLogin(fail: () => boolean): Handle {
  return async (req, body) => {
    if (req.method === "POST" && (req.url ?? "").endsWith("/login") && fail()) {
      return new Response(JSON.stringify({ type: "https://quire.dev/problems/unavailable", title: "Service unavailable", status: 503 }), {
        status: 503,
        headers: { "Content-Type": "application/problem+json", "Retry-After": "1" },
      });
    }
    return forward(req, body);
  };
}

/** What a child process printed, and its exit status. */
type Ran = { status: number | null; stdout: string; stderr: string };

/** Runs node with args and env (SMOKE_ADMIN_*, SMOKE_ORIGIN left out unless given), and returns what it printed. */
function node(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const clean = { ...process.env };
  delete clean.SMOKE_ADMIN_EMAIL;
  delete clean.SMOKE_ADMIN_PASSWORD;
  delete clean.SMOKE_ORIGIN;
  const child = spawn(process.execPath, args, { env: { ...clean, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs the smoke command (smoke.mjs) against url, with more variables, as a user runs it. */
function command(url: string, env: Record<string, string> = {}): Promise<Ran> {
  return node([fileURLToPath(new URL("./smoke.mjs", import.meta.url))], { BASE_URL: url, ...env });
}

/** Runs `make smoke`'s command, node e2e/run.mjs --smoke url. */
function makeSmoke(url: string): Promise<Ran> {
  return node([fileURLToPath(new URL("../../../e2e/run.mjs", import.meta.url)), "--smoke", url]);
}

test("make smoke ends with one line naming the URL and the cause, against what is not a Quire that is up", async (t) => {
  // A port nothing listens on: one that was free, closed again.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const unused = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((r) => closed.close(() => r()));
  const notQuire = await serve(t, async () => new Response("<h1>Not found</h1>", { status: 404, headers: { "Content-Type": "text/html" } }));
  const empty = await serve(t, async () => new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } }));
  const healthOnly = await serve(t, async (req) =>
    req.url?.endsWith("/health")
      ? new Response('{"status":"ok","database":"ok"}', { status: 200, headers: { "Content-Type": "application/json" } })
      : new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } }),
  );
  for (const [url, line] of [
    [unused, /^smoke: FAIL health: GET \S+\/health: no answer \(ECONNREFUSED\)$/],
    [notQuire, /^smoke: FAIL health: GET \S+\/health answered 404 <h1>Not found<\/h1>: not a Quire that is up at this URL$/],
    [empty, /^smoke: FAIL health: GET \S+\/health answered 200 \{\}: not a Quire that is up at this URL$/],
    [healthOnly, /^smoke: FAIL documents: GET \S+\/openapi\.json answered 200 \{\}: no OpenAPI document of a Quire version$/],
  ] as const) {
    const { status, stdout, stderr } = await makeSmoke(url);
    const last = stderr.trimEnd().split("\n").at(-1) ?? "";
    assert.equal(status, 1, `make smoke against ${url}: exit status ${status}`);
    assert.match(last, line, `make smoke against ${url}: its last line`);
    assert.ok(last.includes(url), `the line names the URL ${url}: ${last}`);
    assert.equal(stderr.trimEnd().split("\n").length, 1, `one line: ${stderr}`);
    assert.doesNotMatch(stdout, /running the smoke suite/, "the journey did not start");
  }
});

test("the smoke suite passes against the local server, with an admin", async () => {
  const steps: string[] = [];
  await smoke(apiURL, { admin, origin }, (s) => steps.push(s));
  for (const s of ["sign-up, and its replay", "deposit", "pay, and its replay", "CORS preflights", "API Gateway's own 401 and 404"]) {
    assert.ok(steps.includes(s), `no step ${s}: ${steps.join(", ")}`);
  }
  assert.equal(steps.at(-1), "clean-up");
});

test("the smoke command passes against the local server without an admin, as the pipeline runs it", async () => {
  const { status, stdout, stderr } = await command(apiURL, { SMOKE_ORIGIN: origin });
  assert.equal(status, 0, `exit status ${status}: ${stderr}`);
  for (const s of ["sign-up, and its replay", "pay: refused for a short balance", "CORS preflights", "clean-up"]) {
    assert.match(stdout, new RegExp(`^smoke: ok +${s}$`, "m"), stdout);
  }
  assert.doesNotMatch(stdout, /deposit|pay, and its replay/);
  assert.match(stdout, new RegExp(`^smoke: ${apiURL} passed$`, "m"));
});

test("the smoke command fails, naming the step, against a server that answers everything with 200 {}", async (t) => {
  const url = await serve(t, async () => new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } }));
  const { status, stdout, stderr } = await command(url);
  assert.equal(status, 1, `exit status ${status}: ${stdout}`);
  assert.match(stderr, /^smoke: FAIL health: GET \/health says \{\}$/m);
  assert.equal(stdout, "", "no step passed");
});

test("the smoke suite fails against a server that does not revalidate", async (t) => {
  const url = await serve(t, (req, body) => forward(req, body, ["if-none-match"]));
  await assert.rejects(smoke(url), (err: unknown) => err instanceof SmokeFailure && err.step === "conditional GET" && err.cleanup.length === 0);
});

test("the smoke suite passes against a stage that allows any origin, and fails when it allows credentials", async (t) => {
  await smoke(await serve(t, allowAny(false)), { origin });
  await assert.rejects(
    smoke(await serve(t, allowAny(true)), { origin }),
    (err: unknown) => err instanceof SmokeFailure && err.step === "CORS preflights" && /credentials/.test(err.why),
  );
});

test("the smoke suite deletes its customer when the login fails after the sign-up", async (t) => {
  let logins = 0;
  const deleted: string[] = [];
  const url = await serve(t, async (req, body) => {
    const res = await failingLogin(() => ++logins === 1)(req, body);
    if (req.method === "DELETE" && /\/users\/\d+$/.test(req.url ?? "") && res.status === 204) {
      deleted.push(req.url ?? "");
    }
    return res;
  });
  await assert.rejects(smoke(url), (err: unknown) => err instanceof SmokeFailure && err.step === "login" && err.cleanup.length === 0);
  assert.equal(deleted.length, 1, "the customer was not deleted");
});

test("the smoke command names the customer it could not delete", async (t) => {
  const url = await serve(t, failingLogin(() => true));
  const { status, stderr } = await command(url);
  assert.equal(status, 1);
  assert.match(stderr, /^smoke: FAIL login: .* answered 503/m);
  const left = /^smoke: FAIL clean-up: the customer (smoke\+[\w-]+@example\.com) \(id (\d+)\) is left behind: .*DELETE \/api\/v1\/users\/\2$/m.exec(stderr);
  assert.ok(left, stderr);
  // Deletes it, as an operator would.
  const back = quire(apiURL, (await quire(apiURL).POST("/login", { body: admin })).data?.access_token);
  const gone = await back.DELETE("/api/v1/users/{id}", { params: { path: { id: Number(left[2]) } } });
  assert.equal(gone.response.status, 204);
});
