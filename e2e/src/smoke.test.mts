// The smoke suite (smoke.mts) passes against the local server, and fails,
// naming the step, against servers that answer wrongly: one that answers
// every request 200 with {}, and one that forwards to the local server but
// drops If-None-Match, so that a revalidation is a full answer.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { admin, apiURL } from "./env.mjs";
import { smoke, SmokeFailure } from "./smoke.mjs";

/** Serves handle on a free port of 127.0.0.1 until the test ends, and returns its URL with apiURL's base path. */
async function serve(t: { after: (f: () => void) => void }, handle: (req: IncomingMessage, body: Buffer) => Promise<Response>): Promise<string> {
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

test("the smoke suite passes against the local server", async () => {
  const steps: string[] = [];
  await smoke(apiURL, admin, (s) => steps.push(s));
  assert.ok(steps.includes("pay, and its replay") && steps.at(-1) === "clean-up", `steps: ${steps.join(", ")}`);
});

test("the smoke suite fails against a server that answers everything with 200 {}", async (t) => {
  const url = await serve(t, async () => new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } }));
  await assert.rejects(smoke(url), (err: unknown) => err instanceof SmokeFailure && err.step === "health");
});

test("the smoke suite fails against a server that does not revalidate", async (t) => {
  const origin = new URL(apiURL).origin;
  const url = await serve(t, (req, body) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && k !== "host" && k !== "if-none-match" && k !== "connection") {
        headers.set(k, v);
      }
    }
    return fetch(origin + (req.url ?? "/"), {
      method: req.method ?? "GET",
      headers,
      redirect: "manual",
      ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
    });
  });
  await assert.rejects(smoke(url, admin), (err: unknown) => err instanceof SmokeFailure && err.step === "conditional GET");
});
