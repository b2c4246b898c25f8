// The Quire clients these tests use: openapi-fetch over the types that
// openapi-typescript generates from each version's OpenAPI document
// (e2e/generated/v<N>.d.ts, written from GET /api/v<N>/openapi.json before
// the tests compile). A front end builds its client the same way.

import createClient, { type Client, type FetchResponse } from "openapi-fetch";
import type * as v1 from "../generated/v1.js";
import type * as v2 from "../generated/v2.js";

export type { v1, v2 };
export type components = v1.components;

/** An RFC 9457 problem, as every error of Quire is. */
export type Problem = components["schemas"]["Problem"];

/** The problem types of Quire: `https://quire.dev/problems/<kind>`. */
export type ProblemType = Problem["type"];

/**
 * The media types this client reads: plain JSON (version 1 unless the path
 * says `/api/v2`) and problem details. Success bodies are typed from their
 * `application/json` schema, error bodies from their `application/problem+json`
 * one.
 */
export type Media = "application/json" | "application/problem+json";

/**
 * A client of version 1 of the API at baseUrl, generated from
 * GET /api/v1/openapi.json, sending token as a bearer token when given.
 */
export function quire(baseUrl: string, token?: string): Client<v1.paths, Media> {
  return createClient<v1.paths, Media>({ baseUrl, headers: bearer(token) });
}

/** A client of version 2, generated from GET /api/v2/openapi.json. */
export function quireV2(baseUrl: string, token?: string): Client<v2.paths, Media> {
  return createClient<v2.paths, Media>({ baseUrl, headers: bearer(token) });
}

function bearer(token?: string): Record<string, string> {
  return token === undefined ? {} : { Authorization: `Bearer ${token}` };
}

type ResponsesOf<Op> = Op extends { responses: infer R } ? R : never;
type ProblemContent<R> = R extends { content: { "application/problem+json": infer P } } ? P : never;

/**
 * The problem body that the document declares for status of the operation
 * Op: for `POST /pay` and 409, a Problem whose type is one of the refusals
 * the document lists for it; for a status the operation does not list, the
 * problem of its `default` response.
 */
export type ProblemOf<Op, Status extends number> = Status extends keyof ResponsesOf<Op>
  ? ProblemContent<ResponsesOf<Op>[Status]>
  : "default" extends keyof ResponsesOf<Op>
    ? ProblemContent<ResponsesOf<Op>["default"]>
    : never;

/**
 * The problem of an answer that failed with status, typed from the
 * operation's responses in the document (inferred from the answer). It
 * throws when the answer has another status, is not application/problem+json,
 * or its body lacks the problem's required members or another status.
 */
export function problem<Op extends Record<string | number, any>, Status extends number>(
  answer: FetchResponse<Op, unknown, Media>,
  status: Status,
): ProblemOf<Op, Status> {
  const { response } = answer;
  const body: unknown = answer.error;
  const what = `${response.url} answered ${response.status}`;
  if (response.status !== status) {
    throw new Error(`${what}, want ${status}: ${JSON.stringify(body ?? answer.data)}`);
  }
  const contentType = response.headers.get("Content-Type") ?? "";
  if (!contentType.startsWith("application/problem+json")) {
    throw new Error(`${what} with Content-Type ${JSON.stringify(contentType)}, want application/problem+json`);
  }
  if (typeof body !== "object" || body === null) {
    throw new Error(`${what} with a problem that is not a JSON object: ${JSON.stringify(body)}`);
  }
  const p = body as Partial<Problem>;
  if (p.status !== status || typeof p.title !== "string" || typeof p.type !== "string") {
    throw new Error(`${what} with a problem lacking status ${status}, title or type: ${JSON.stringify(body)}`);
  }
  return body as ProblemOf<Op, Status>;
}

/**
 * The body of a successful answer. It throws with the problem when the
 * answer failed, and when the status is not want (when given).
 */
export function ok<T>(answer: { data?: T; error?: unknown; response: Response }, want?: number): T {
  const { response } = answer;
  if (answer.error !== undefined || (want !== undefined && response.status !== want)) {
    throw new Error(
      `${response.url} answered ${response.status}${want === undefined ? "" : `, want ${want}`}: ${JSON.stringify(answer.error ?? answer.data)}`,
    );
  }
  if (answer.data === undefined) {
    throw new Error(`${response.url} answered ${response.status} without a body`);
  }
  return answer.data;
}
