import type { APIGatewayProxyEvent } from 'aws-lambda';
import { InvalidParameterError } from '../errors.ts';

/*
 * A request's headers as API Gateway (REST, Lambda proxy) passes them: names as the client spelled
 * them, the last line of each name in `headers`, every line in `multiValueHeaders`
 * (docs/decisions/repeated-headers.md).
 */

type Event = Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>;

/**
 * A request header by its lower-case name, whatever case the client spelled it in (API Gateway
 * passes names as sent).
 */
export function headerOf(headers: Event['headers'] | null, lowerCaseName: string): string | undefined {
  if (!headers) return undefined;
  const exact = Object.hasOwn(headers, lowerCaseName) ? headers[lowerCaseName] : undefined;
  if (exact !== undefined) return exact;
  for (const name in headers) {
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) return headers[name];
  }
  return undefined;
}

/**
 * Every value of a header, from API Gateway's `multiValueHeaders` (one entry per line; lines whose
 * names differ only in case may come under separate names), or `headers` when an event has no
 * multi-value map. Only asked for a header whose every line matters, so the scan costs only those.
 */
export function headerValuesOf(event: Event, lowerCaseName: string): readonly string[] {
  const multi = event.multiValueHeaders;
  if (!multi) {
    const value = headerOf(event.headers, lowerCaseName);
    return value === undefined ? [] : [value];
  }
  const values: string[] = [];
  for (const name in multi) {
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) {
      values.push(...(multi[name] ?? []));
    }
  }
  return values;
}

/**
 * The body's media type. Content-Type is a singleton field (RFC 9110 §8.3), and API Gateway hands
 * the function the last of two lines in `headers` where another hop may have read the first, so a
 * body labelled twice is refused, whatever the lines say (docs/decisions/repeated-headers.md).
 */
export function contentTypeOf(event: Event): string | undefined {
  if (headerValuesOf(event, 'content-type').length > 1) {
    throw new InvalidParameterError('Content-Type must be sent once, naming one media type');
  }
  return headerOf(event.headers, 'content-type');
}
