// Headless Chromium for the browser tests, and small HTTP servers that
// serve their pages from an origin of their own.

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestContext } from "node:test";

import puppeteer, { type Browser, type Page } from "puppeteer-core";

import { chromium } from "./env.mjs";

/**
 * Launches the system Chromium headless (no sandbox: tests may run as root
 * in a container), closed when the test ends. "shell" passes --headless,
 * which chromium-headless-shell takes as it is and the whole browser as its
 * headless mode.
 */
export async function launch(t: TestContext): Promise<Browser> {
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: "shell",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    timeout: 30_000,
  });
  t.after(() => browser.close());
  return browser;
}

/**
 * A new page whose script errors, failed requests and console errors are
 * kept, for failure messages: a page that breaks says why.
 */
export async function newPage(browser: Browser): Promise<{ page: Page; trouble: string[] }> {
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  const trouble: string[] = [];
  page.on("pageerror", (err) => trouble.push(`page error: ${err instanceof Error ? err.message : String(err)}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") {
      trouble.push(`console: ${msg.text()}`);
    }
  });
  page.on("requestfailed", (req) => trouble.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText ?? ""}`));
  return { page, trouble };
}

/**
 * Serves html at every path from http://127.0.0.1:<port> (port 0: any free
 * one) until the test ends, and returns the server's origin.
 */
export async function servePage(t: TestContext, html: string, port = 0): Promise<string> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" }).end(html);
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
