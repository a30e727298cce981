/**
 * An endpoint's signing secret: 32 random bytes (Standard Webhooks asks for 24 to 64), written
 * `whsec_<base64>` as the spec and its libraries read it. Shown once, in the answer that created
 * or rotated it; stored only sealed (./envelope.ts); never logged.
 */
import { randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const SECRET_BYTES = 32;

/** A fresh secret. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}
