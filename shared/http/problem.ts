import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Violation } from '../errors.ts';

/** Problem type URIs are URNs: stable identifiers that promise no web page (RFC 9457 §3.1.1). */
const PROBLEM_TYPE_PREFIX = 'urn:problem-type:wallet-catalog:';

/** The problem type URI for a short slug such as `insufficient-funds`. */
export const problemType = (slug: string): string => PROBLEM_TYPE_PREFIX + slug;

/** RFC 9457 media type of every error body. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** What an error becomes on the wire. */
export interface Problem {
  slug: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  errors?: readonly Violation[];
  /** With `errors`: how many violations were found (more than listed when it was capped). */
  errorCount?: number;
}

/** Serialises a problem as an API Gateway proxy response. */
export function problemResponse(
  problem: Problem,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  const { slug, errors, ...rest } = problem;
  return {
    statusCode: problem.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ type: problemType(slug), ...rest, ...(errors ? { errors } : {}) }),
  };
}

const JSON_TEXT = Symbol('jsonText');

/** A body already serialised (e.g. once per container), sent as is instead of stringified again. */
export interface JsonText {
  readonly [JSON_TEXT]: string;
}

/** Wraps JSON text so that {@link jsonResponse} sends it verbatim. */
export const jsonText = (text: string): JsonText => ({ [JSON_TEXT]: text });

/** Serialises a successful JSON body as an API Gateway proxy response; `headers` add or override. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers?: Record<string, string>,
): APIGatewayProxyResult {
  // 204 No Content: no body, so no media type either (RFC 9110 §15.3.5).
  if (statusCode === 204)
    return { statusCode, headers: { 'cache-control': 'no-store', ...headers }, body: '' };
  const text =
    typeof body === 'object' && body !== null && JSON_TEXT in body
      ? (body as JsonText)[JSON_TEXT]
      : JSON.stringify(body);
  return {
    statusCode,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: text,
  };
}
