/**
 * Secrets at rest: envelope encryption. Each secret is encrypted with AES-256-GCM under a data key
 * of its own; the data key is stored only wrapped by a key-encryption key that never leaves its
 * keeper (AWS KMS deployed, ./kms-key-wrapper.ts; a key from configuration locally,
 * ./static-key-wrapper.ts). The endpoint's id and wallet are the additional authenticated data, so
 * a sealed secret copied onto another endpoint does not open. Opened data keys are cached per
 * wrapped key, so a warm dispatcher asks the keeper once per secret, not once per delivery.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A secret as stored: nothing in it opens without the keeper. */
export interface SealedSecret {
  /** base64 of IV (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes). */
  readonly ciphertext: string;
  /** base64 of the data key as the keeper wrapped it. */
  readonly wrappedKey: string;
  /** Which keeper wrapped it (`kms:<key id>` or `static:<key id>`): a key rotation can tell old from new. */
  readonly keeper: string;
}

/** What a sealed secret belongs to: bound into the ciphertext and into the keeper's context. */
export interface SecretContext {
  readonly address: string;
  readonly endpointId: string;
}

/** The keeper of the key-encryption key. */
export interface KeyWrapper {
  readonly name: string;
  /** A fresh 32-byte data key, in the clear and wrapped. */
  generateDataKey(context: SecretContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }>;
  unwrap(wrapped: Uint8Array, context: SecretContext): Promise<Uint8Array>;
}

/** Seals and opens secrets: the port the endpoint use cases and the dispatcher's store use. */
export interface SecretSealer {
  seal(secret: string, context: SecretContext): Promise<SealedSecret>;
  open(sealed: SealedSecret, context: SecretContext): Promise<string>;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Data keys kept open: at most 10 endpoints × 3 secrets per wallet, many wallets per container. */
const MAX_CACHED_KEYS = 1000;

const aadOf = (context: SecretContext) => Buffer.from(JSON.stringify([context.address, context.endpointId]));

export function createEnvelopeSealer(wrapper: KeyWrapper): SecretSealer {
  const openKeys = new Map<string, Uint8Array>();
  return {
    async seal(secret, context) {
      const { plaintext, wrapped } = await wrapper.generateDataKey(context);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', plaintext, iv);
      cipher.setAAD(aadOf(context));
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return {
        ciphertext: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64'),
        wrappedKey: Buffer.from(wrapped).toString('base64'),
        keeper: wrapper.name,
      };
    },
    async open(sealed, context) {
      const cacheKey = `${sealed.wrappedKey}\n${context.address}\n${context.endpointId}`;
      let key = openKeys.get(cacheKey);
      if (key === undefined) {
        key = await wrapper.unwrap(Buffer.from(sealed.wrappedKey, 'base64'), context);
        if (openKeys.size >= MAX_CACHED_KEYS) openKeys.delete(openKeys.keys().next().value as string);
        openKeys.set(cacheKey, key);
      }
      const bytes = Buffer.from(sealed.ciphertext, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(aadOf(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}
