// The API's docs page, GET /docs (Swagger UI over each version's OpenAPI
// document), in headless Chromium: it opens on the newest version, offers
// each at the top, shows every operation of the chosen version's document
// and every event it publishes (its webhooks),
// and its "Try it out" calls the API the page came from, base path included
// (run.mjs serves it under one): in each version, the health check, then
// the demo customer's login (the example body make run's page carries: the
// README's Grace), which authorizes the page with its token, then a read of
// her own user in that version's representation. The page names the API
// serving it as its server, its selector as the API's version, and logs no
// error to its console.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import type { ElementHandle, Page } from "puppeteer-core";

import { launch, newPage } from "./browser.mjs";
import { apiURL, customer, outDir } from "./env.mjs";

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface Operation {
  method: string;
  path: string;
  operationId: string;
}

/** The operations of version v's OpenAPI document, GET /api/v<v>/openapi.json, its webhooks (the events) included. */
async function operations(v: number): Promise<Operation[]> {
  const res = await fetch(`${apiURL}/api/v${v}/openapi.json`);
  assert.equal(res.status, 200, `GET /api/v${v}/openapi.json`);
  type Items = Record<string, Record<string, { operationId?: string }>>;
  const doc = (await res.json()) as { paths: Items; webhooks?: Items };
  const ops: Operation[] = [];
  for (const [path, item] of [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})]) {
    for (const [method, op] of Object.entries(item)) {
      if (methods.includes(method)) {
        ops.push({ method, path, operationId: op.operationId ?? "" });
      }
    }
  }
  return ops;
}

/** Opens GET /docs, failing at once, and saying why, when it is not the docs page. */
async function openDocs(page: Page, trouble: string[]): Promise<void> {
  const res = await page.goto(`${apiURL}/docs`, { waitUntil: "load" });
  assert.ok(res, "GET /docs: no answer");
  if (res.status() !== 200) {
    const body = (await res.text()).slice(0, 300);
    assert.fail(`GET /docs answered ${res.status()}, want 200 and the docs page (Swagger UI): ${body}`);
  }
  try {
    await page.waitForSelector(".swagger-ui .opblock-tag-section", { timeout: 20_000 });
  } catch {
    const title = await page.title();
    assert.fail(
      `GET /docs (title ${JSON.stringify(title)}) rendered no operation within 20s: ` +
        `Swagger UI did not load or render the document. ${trouble.join("; ")}`,
    );
  }
  // Swagger UI may start with its tag sections folded: unfold them all.
  for (const folded of await page.$$(".opblock-tag-section:not(.is-open) .opblock-tag")) {
    await folded.click();
  }
  await page.waitForSelector(".swagger-ui .opblock");
}

/** The operation's block on the page, unfolded, with its "Try it out" on. */
async function tryOut(page: Page, op: Operation): Promise<ElementHandle<Element>> {
  const selector = `.opblock[id$="-${op.operationId}"]`;
  const block = await page.waitForSelector(selector);
  assert.ok(block, `no block for ${op.method.toUpperCase()} ${op.path} (${selector}) on /docs`);
  if (!(await block.evaluate((el) => el.classList.contains("is-open")))) {
    const summary = await block.waitForSelector(".opblock-summary");
    await summary?.click();
  }
  const button = await block.waitForSelector(".try-out__btn, .btn.execute");
  const label = await button?.evaluate((el) => el.textContent?.trim());
  if (label === "Try it out") {
    await button?.click();
  }
  await block.waitForSelector(".btn.execute");
  return block;
}

/** Replaces what a field holds with text, as a paste would. */
async function fill(page: Page, field: ElementHandle<Element>, text: string): Promise<void> {
  await field.focus();
  await field.evaluate((el) => (el as HTMLInputElement | HTMLTextAreaElement).select());
  await page.keyboard.press("Backspace");
  await page.keyboard.sendCharacter(text);
}

/** Executes the operation in the page and returns the status, body and request URL it shows. */
async function execute(block: ElementHandle<Element>): Promise<{ status: number; body: string; url: string }> {
  const button = await block.waitForSelector(".btn.execute");
  await button?.click();
  const cell = await block.waitForSelector(".live-responses-table tbody .response-col_status", { timeout: 15_000 });
  const status = Number((await cell?.evaluate((el) => el.textContent ?? ""))?.trim().slice(0, 3));
  const body =
    (await block.$eval(".live-responses-table tbody .response-col_description .highlight-code pre", (el) => el.textContent ?? "").catch(
      () => "",
    )) ?? "";
  const url = (await block.$eval(".request-url pre", (el) => el.textContent ?? "").catch(() => "")).trim();
  return { status, body, url };
}

/** Waits until the page shows exactly the operations of ops. */
async function shows(page: Page, ops: Operation[], version: number): Promise<void> {
  // Swagger UI renders a document in one pass; wait until the count holds.
  await page
    .waitForFunction(
      (n, prefix) =>
        document.querySelectorAll(".swagger-ui .opblock").length === n &&
        [...document.querySelectorAll(".swagger-ui .opblock-summary-path")].some((el) => el.textContent?.startsWith(prefix)),
      { timeout: 15_000 },
      ops.length,
      `/api/v${version}/`,
    )
    .catch(() => undefined);
  for (const folded of await page.$$(".opblock-tag-section:not(.is-open) .opblock-tag")) {
    await folded.click();
  }
  const ids = await page.$$eval(".swagger-ui .opblock", (els) => els.map((el) => el.id));
  assert.equal(ids.length, ops.length, `/docs shows ${ids.length} operations of version ${version}, its document has ${ops.length}`);
  for (const op of ops) {
    assert.ok(
      ids.some((id) => id.endsWith(`-${op.operationId}`)),
      `/docs shows no ${op.method.toUpperCase()} ${op.path} (${op.operationId}) of version ${version}`,
    );
  }
}

test("the docs page offers each version, shows its operations, and tries them out", async (t) => {
  const browser = await launch(t);
  const { page, trouble } = await newPage(browser);
  await page.setViewport({ width: 1280, height: 1000 });
  await openDocs(page, trouble);

  const how = await page.$eval("#how", (el) => el.textContent ?? "");
  assert.match(how, /log in[\s\S]*POST \/login[\s\S]*access token/, "the page says how to log in, and that the login authorizes it");

  const select = await page.waitForSelector(".download-url-wrapper select");
  assert.ok(select, "/docs has a version selector");
  await page.waitForFunction(() => document.querySelector(".download-url-wrapper .select-label span")?.textContent === "API version", {
    timeout: 5_000,
  }).catch(() => assert.fail("the version selector is not labelled API version"));
  const offered = await select.$$eval("option", (els) => els.map((el) => el.textContent ?? ""));
  assert.deepEqual(offered, ["v2", "v1"], "the selector offers each version, the newest first");

  for (const version of [2, 1]) {
    try {
      const ops = await operations(version);
      assert.ok(!ops.some((o) => o.path === "/docs/{file}"), "the docs page's own files are no operation of a version");
      const find = (method: string, path: string): Operation => {
        const op = ops.find((o) => o.method === method && o.path === path);
        assert.ok(op?.operationId, `version ${version}'s document has ${method.toUpperCase()} ${path} with an operationId`);
        return op;
      };
      if (version !== 2) {
        await page.select(".download-url-wrapper select", `${new URL(apiURL).pathname}/api/v${version}/openapi.json`);
      }
      await shows(page, ops, version);

      // GET /health, tried out in the page.
      const health = await execute(await tryOut(page, find("get", "/health")));
      assert.equal(health.status, 200, `GET /health from /docs: ${health.body} ${trouble.join("; ")}`);
      assert.match(health.body, /"status":\s*"ok"/);
      assert.equal(health.url, `${apiURL}/health`, "the page calls the API it came from, base path included");

      // The server the page calls is the one serving it, base path included.
      const servers = await page.$$eval(".servers select option", (els) => els.map((el) => (el as HTMLOptionElement).value));
      assert.deepEqual(servers, [apiURL], "the Servers box names the API serving the page");

      // The demo customer logs in from the page, with the example body it
      // offers on this machine...
      const login = await tryOut(page, find("post", "/login"));
      const editor = await login.waitForSelector("textarea.body-param__text");
      assert.ok(editor, "POST /login on /docs has a body editor");
      const example = JSON.parse(await editor.evaluate((el) => (el as HTMLTextAreaElement).value)) as unknown;
      assert.deepEqual(example, { email: customer.email, password: customer.password }, "POST /login's example body on this machine is the demo customer's login");
      const answer = await execute(login);
      assert.equal(answer.status, 200, `POST /login from /docs: ${answer.body} ${trouble.join("; ")}`);
      const token = (JSON.parse(answer.body) as { access_token: string }).access_token;
      assert.ok(token, "the login shown on /docs has an access token");

      // ...which authorizes the page with its access token...
      await page.waitForSelector(".auth-wrapper .btn.authorize.locked", { timeout: 5_000 }).catch(() => {
        assert.fail("a login from /docs did not authorize the page (its Authorize button is not locked)");
      });

      // ...and reads her own user with it, in the version's
      // representation.
      const read = await tryOut(page, find("get", `/api/v${version}/users/{id}`));
      const id = await read.waitForSelector('tr[data-param-name="id"] input');
      assert.ok(id, "GET /users/{id} on /docs has an id field");
      await fill(page, id, String(customer.id));
      const user = await execute(read);
      assert.equal(user.status, 200, `GET /api/v${version}/users/1 from /docs: ${user.body} ${trouble.join("; ")}`);
      const got = JSON.parse(user.body) as { email: string; name?: string; first_name?: string };
      assert.equal(got.email, customer.email);
      assert.equal(version === 2 ? got.name !== undefined : got.first_name !== undefined, true, `a v${version} user: ${user.body}`);
      assert.equal(user.url, `${apiURL}/api/v${version}/users/${customer.id}`);
    } catch (err) {
      // A screenshot of the page as it failed: rendering one takes seconds.
      const screenshot = join(outDir, `docs-v${version}.png`);
      await page.screenshot({ path: screenshot, fullPage: true }).catch(() => undefined);
      t.diagnostic(`screenshot of the page that failed: ${screenshot}`);
      throw err;
    }
  }

  // The page's Content-Security-Policy lets Swagger UI do all of that, and
  // nothing else failed either (a favicon's 404 among them).
  assert.deepEqual(trouble, [], "the page logged errors or failed requests");
});
