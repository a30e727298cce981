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

/** Serialises a successful JSON body as an API Gateway proxy response. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
