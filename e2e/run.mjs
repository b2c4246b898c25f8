#!/usr/bin/env node
// Runs Quire's end-to-end tests against the local server (`make e2e`):
//
//  1. starts build/quire-local on a free port, with DynamoDB Local and the
//     demo data, allowing one origin (CORS_ORIGINS) for the browser tests,
//     under the base path /shop (BASE_PATH), as a custom domain's base path
//     mapping serves the API: every link the client follows, the docs page
//     and its "Try it out" must keep it (the Go tests cover the root); its
//     files go to build/e2e (SAM_ENV_FILE, KEYS_FILE), so that it leaves
//     those of `make run` (build/sam-env.json) alone;
//  2. reads each version's OpenAPI document, GET /api/v<N>/openapi.json
//     (into build/e2e/openapi-v<N>.json; GET /openapi.json, the newest
//     version's, says how many there are), lints it with Redocly's
//     recommended rules (redocly.yaml; an error fails the run), and
//     generates the TypeScript client's types of that version from it with
//     openapi-typescript (e2e/generated/v<N>.d.ts);
//  3. type-checks and compiles the tests with tsc (strict; nothing is
//     emitted when a type does not check), so that an API change that breaks
//     generated clients fails here;
//  4. runs them with node --test: the generated client (client.test), the
//     Swagger UI page (docs.test) and a page of another origin (cors.test),
//     the last two in headless Chromium, and the smoke suite (smoke.test:
//     smoke.mts against the server with the admin and, as its command,
//     without, and against servers that answer wrongly, which it must
//     fail);
//  5. stops the server, whatever happened.
//
// `node e2e/run.mjs --smoke <url>` (make smoke BASE_URL=<url>) runs the
// smoke suite alone against a running Quire: its client generated from
// that Quire's documents, then the journey; SMOKE_ADMIN_EMAIL and
// SMOKE_ADMIN_PASSWORD let it record the money its payment needs, and
// SMOKE_ORIGIN names an origin the API allows, whose preflight it checks.
//
// Environment: CHROMIUM (the browser; default: the one
// scripts/install-chromium.sh finds or installs on PATH),
// E2E_TIMEOUT (seconds for the whole run; default 300) and what
// build/quire-local reads (DYNAMODB_ENDPOINT, DYNAMODB_LOCAL_DIR...).

import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "build", "e2e");
const compiled = join(out, "js");
const generated = join(root, "e2e", "generated");
const server = join(root, "build", "quire-local");
const bin = join(root, "node_modules", ".bin");

const admin = { email: "admin@quire.example", password: "quire-admin-password" };
const started = Date.now();

function step(msg) {
  const s = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`e2e [${s}s] ${msg}`);
}

function fail(msg) {
  console.error(`e2e: ${msg}`);
  process.exitCode = 1;
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The Chromium to drive: CHROMIUM, else chromium-headless-shell, chromium or chromium-browser on PATH. */
function findChromium() {
  if (process.env.CHROMIUM) {
    return existsSync(process.env.CHROMIUM) ? process.env.CHROMIUM : undefined;
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of ["chromium-headless-shell", "chromium", "chromium-browser"]) {
      if (dir && existsSync(join(dir, name))) {
        return join(dir, name);
      }
    }
  }
  return undefined;
}

/** Runs a command to completion, its output on ours; true when it succeeded. */
function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  if (r.error) {
    fail(`${cmd}: ${r.error.message}`);
    return false;
  }
  return r.status === 0;
}

/** Waits until GET url answers 200, the process exits, or the time is up. */
async function waitHealthy(url, proc, seconds) {
  const deadline = Date.now() + seconds * 1000;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`build/quire-local exited (${proc.exitCode ?? proc.signalCode}) before it answered`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        return;
      }
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = String(err.cause?.code ?? err.message);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer 200 within ${seconds}s (last: ${last})`);
}

/** Stops the server as Ctrl-C would, so that it stops its DynamoDB Local too. */
async function stop(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) {
    return;
  }
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

function tail(file, lines) {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** Runs a command to completion, its output held and printed whole when it ends; true when it succeeded. */
function runHeld(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: process.env });
    const held = [];
    child.stdout.on("data", (b) => held.push(b));
    child.stderr.on("data", (b) => held.push(b));
    child.on("error", (err) => {
      fail(`${cmd}: ${err.message}`);
      resolve(false);
    });
    child.on("close", (code) => {
      process.stdout.write(Buffer.concat(held));
      resolve(code === 0);
    });
  });
}

/**
 * Reads each version's OpenAPI document from the API at apiURL, lints it
 * and generates its client's types (e2e/generated/v<N>.d.ts): the versions
 * side by side, each one's output printed whole.
 */
async function generate(apiURL) {
  const newest = await fetch(`${apiURL}/openapi.json`);
  if (newest.status !== 200) {
    throw new Error(`GET /openapi.json answered ${newest.status}`);
  }
  const versions = Number((await newest.json()).info.version);
  const one = async (v) => {
    const path = `/api/v${v}/openapi.json`;
    const doc = await fetch(`${apiURL}${path}`);
    if (doc.status !== 200) {
      throw new Error(`GET ${path} answered ${doc.status}`);
    }
    const spec = join(out, `openapi-v${v}.json`);
    writeFileSync(spec, Buffer.from(await doc.arrayBuffer()));
    const types = join(generated, `v${v}.d.ts`);
    step(`linting ${relative(root, spec)} with Redocly's recommended rules (redocly.yaml), then generating version ${v}'s client types into ${relative(root, types)}`);
    if (!(await runHeld(join(bin, "redocly"), ["lint", spec, "--config", join(root, "redocly.yaml")]))) {
      throw new Error(`Redocly's lint finds errors in version ${v}'s OpenAPI document (see above)`);
    }
    if (!(await runHeld(join(bin, "openapi-typescript"), [spec, "--output", types]))) {
      throw new Error(`openapi-typescript could not generate the client from version ${v}'s document`);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: versions }, (_, i) => one(i + 1)));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    throw failed.reason;
  }
}

/** Type-checks and compiles the tests and the smoke suite against the generated types. */
function compile() {
  step("type-checking and compiling the tests (tsc, strict)");
  if (!run(join(bin, "tsc"), ["--project", join(root, "e2e", "tsconfig.json")])) {
    throw new Error(
      "the tests do not type-check against the client generated from the current OpenAPI document: " +
        "an API change breaks generated clients, or a test is wrong (see tsc's errors above)",
    );
  }
}

/**
 * Empties the generated client, which a run writes anew. The compiled tests
 * stay, with tsc's record of what it compiled them from (incremental), so
 * that tsc compiles again only what changed.
 */
function clean() {
  mkdirSync(out, { recursive: true });
  rmSync(generated, { recursive: true, force: true });
  mkdirSync(generated, { recursive: true });
}

/** Ends make smoke with its one failure line: the step, and what went wrong. */
function smokeFailed(stepName, what) {
  console.error(`smoke: FAIL ${stepName}: ${what}`);
  process.exitCode = 1;
}

/** GET url as JSON: its status and body, or why there is no answer (the cause's code, such as ECONNREFUSED). */
async function getJSON(url) {
  let res;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: "manual" });
  } catch (err) {
    return { error: `GET ${url}: no answer (${err.cause?.code ?? err.cause?.message ?? err.message})` };
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text), text };
  } catch {
    return { status: res.status, text };
  }
}

/**
 * Why the API at url is not a Quire the smoke suite can run against, as
 * [step, what], or undefined: its health check answers 200 with status
 * "ok", and GET /openapi.json a document of a numbered version.
 */
async function notQuire(url) {
  const health = await getJSON(`${url}/health`);
  if (health.error) {
    return ["health", health.error];
  }
  if (health.status !== 200 || health.body?.status !== "ok") {
    return ["health", `GET ${url}/health answered ${health.status} ${health.text.slice(0, 100)}: not a Quire that is up at this URL`];
  }
  const doc = await getJSON(`${url}/openapi.json`);
  if (doc.error) {
    return ["documents", doc.error];
  }
  if (doc.status !== 200 || !(Number(doc.body?.info?.version) >= 1)) {
    return ["documents", `GET ${url}/openapi.json answered ${doc.status} ${doc.text.slice(0, 100)}: no OpenAPI document of a Quire version`];
  }
  return undefined;
}

/**
 * Runs the smoke suite alone against the API at url (make smoke): first
 * that it is a Quire that is up, then the client generated from its own
 * documents, then the journey. Whatever fails, the last line is `smoke:
 * FAIL <step>: <what>`, and the exit status 1.
 */
async function smokeOnly(url) {
  if (!url) {
    return fail("make smoke: set BASE_URL to the API's URL, such as https://abc123.execute-api.eu-west-1.amazonaws.com/prod");
  }
  url = url.replace(/\/$/, "");
  const why = await notQuire(url);
  if (why) {
    return smokeFailed(...why);
  }
  clean();
  try {
    await generate(url);
    compile();
  } catch (err) {
    return smokeFailed("documents", err.message);
  }
  step(`running the smoke suite against ${url}`);
  if (!run(process.execPath, [join(compiled, "smoke.mjs")], { BASE_URL: url })) {
    process.exitCode = 1; // smoke.mjs printed its failure
  }
}

async function main() {
  if (process.argv[2] === "--smoke") {
    return smokeOnly(process.argv[3]);
  }
  if (!existsSync(server)) {
    return fail("build/quire-local is missing: go build -o build/quire-local ./cmd/local (make e2e does)");
  }
  const chromium = findChromium();
  if (!chromium) {
    return fail("no Chromium: run scripts/install-chromium.sh (make e2e does), or set CHROMIUM to a Chromium or Chrome");
  }
  clean();

  const [apiPort, originPort] = await Promise.all([freePort(), freePort()]);
  const basePath = "/shop";
  const apiURL = `http://127.0.0.1:${apiPort}${basePath}`;
  const log = join(out, "quire-local.log");
  step(`starting build/quire-local on ${apiURL} (log: ${relative(root, log)})`);
  const logStream = createWriteStream(log);
  const proc = spawn(server, [], {
    cwd: root,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(apiPort),
      CORS_ORIGINS: `http://127.0.0.1:${originPort}`,
      BASE_PATH: basePath,
      SEED_ADMIN_EMAIL: admin.email,
      SEED_ADMIN_PASSWORD: admin.password,
      KEYS_FILE: join(out, "signing-keys.json"),
      SAM_ENV_FILE: join(out, "sam-env.json"),
      DATA_DIR: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout.pipe(logStream);
  proc.stderr.pipe(logStream);
  const interrupted = () => {
    proc.kill("SIGTERM");
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);

  const timeout = Number(process.env.E2E_TIMEOUT || 300);
  const watchdog = setTimeout(() => {
    fail(`the end-to-end tests took more than ${timeout}s (E2E_TIMEOUT): stopping`);
    proc.kill("SIGKILL");
    process.exit(1);
  }, timeout * 1000);
  watchdog.unref();

  try {
    await waitHealthy(`${apiURL}/health`, proc, 90);
    step("the API is up");

    await generate(apiURL);
    compile();

    // The tests of e2e/src: a compiled file whose source is gone stays.
    const tests = readdirSync(join(root, "e2e", "src"))
      .filter((f) => f.endsWith(".test.mts"))
      .sort()
      .map((f) => join(compiled, f.replace(/\.mts$/, ".mjs")));
    step(`running ${tests.length} test files with node --test (Chromium: ${chromium})`);
    const child = spawn(
      process.execPath,
      ["--test", "--test-concurrency=3", "--test-timeout=90000", "--test-reporter=spec", ...tests],
      {
        cwd: root,
        stdio: "inherit",
        env: {
          ...process.env,
          QUIRE_URL: apiURL,
          QUIRE_ADMIN_EMAIL: admin.email,
          QUIRE_ADMIN_PASSWORD: admin.password,
          QUIRE_ALLOWED_ORIGIN_PORT: String(originPort),
          CHROMIUM: chromium,
          QUIRE_E2E_OUT: out,
        },
      },
    );
    const code = await new Promise((r) => child.on("exit", (c, sig) => r(c ?? (sig ? 1 : 0))));
    if (code !== 0) {
      fail(`the end-to-end tests failed (the server's log is ${relative(root, log)})`);
    }
  } catch (err) {
    fail(err.message);
    const t = tail(log, 20);
    if (t) {
      console.error(`--- last lines of ${relative(root, log)} ---\n${t}`);
    }
  } finally {
    await stop(proc);
    logStream.end();
    step(process.exitCode ? "failed" : "passed");
  }
}

await main();
