/**
 * Endpoint ids: made when an endpoint is registered, read from a route's path. Apart from the
 * endpoint management, so that a function that only names an endpoint (the replay) carries none of
 * it: no URL or address checks, no ipaddr.js, in its bundle or its cold init.
 */
import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../errors.ts';

/** `whep_` and 16 random bytes: unguessable, so an id tells nothing of other endpoints. */
export const newEndpointId = (): string => `whep_${randomBytes(16).toString('base64url')}`;

const ENDPOINT_ID = /^whep_[A-Za-z0-9_-]{22}$/;

/** The endpoint id of the path, or a 404: a malformed id names no endpoint, and costs no read. */
export function endpointIdOf(pathParameters: Readonly<Record<string, string | undefined>>): string {
  const id = pathParameters.webhookId ?? '';
  if (!ENDPOINT_ID.test(id)) throw new NotFoundError('No webhook endpoint of yours has this id');
  return id;
}
