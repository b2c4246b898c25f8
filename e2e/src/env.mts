// What e2e/run.mjs tells the tests: where the API is, the demo admin's
// credentials, the origin whose pages the API allows, the browser to drive
// and where to write what the tests produce.

import { randomUUID } from "node:crypto";

function required(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name} is not set: run the end-to-end tests with \`make e2e\` (or node e2e/run.mjs)`);
  }
  return v;
}

/** The API's base URL, base path included, such as http://127.0.0.1:41234/shop. */
export const apiURL = required("QUIRE_URL");

/** The base path apiURL has ("/shop"), which the API's links keep, or "". */
export const basePath = new URL(apiURL).pathname.replace(/\/$/, "");

/** The demo admin's credentials (SEED_ADMIN_EMAIL, SEED_ADMIN_PASSWORD of the server). */
export const admin = { email: required("QUIRE_ADMIN_EMAIL"), password: required("QUIRE_ADMIN_PASSWORD") };

/** The demo customer's credentials (internal/demo): Grace, the README's customer, id 2. */
export const customer = { email: "grace@quire.example", password: "quire-customer-password", id: 2 };

/** The port of http://127.0.0.1:<port>, the one origin in the server's CORS_ORIGINS. */
export const allowedOriginPort = Number(required("QUIRE_ALLOWED_ORIGIN_PORT"));

/** The Chromium executable to drive. */
export const chromium = required("CHROMIUM");

/** Where the tests write what they produce (screenshots): build/e2e. */
export const outDir = required("QUIRE_E2E_OUT");

/** A string no other run of the tests uses, for emails and idempotency keys. */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}
