/**
 * A key-encryption key from configuration (`WEBHOOK_SECRETS_KEY`, 32 bytes base64), for where AWS
 * KMS is not: `npm start` and the tests. No maintained local KMS installs from npm or Debian, and
 * the wrapping is the same AES-256-GCM the envelope uses, so only the keeper differs between the
 * local and the deployed stack (docs/decisions/webhooks.md, "Secrets at rest").
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { KeyWrapper, SecretContext } from './envelope.ts';

const aadOf = (context: SecretContext) =>
  Buffer.from(JSON.stringify(['data-key', context.address, context.endpointId]));

export function createStaticKeyWrapper(keyBase64: string): KeyWrapper {
  const kek = Buffer.from(keyBase64, 'base64');
  if (kek.length !== 32) throw new Error('WEBHOOK_SECRETS_KEY must be 32 bytes, base64');
  // Names the key without revealing it: a stored secret says which key sealed it.
  const keyId = createHash('sha256').update(kek).digest('base64url').slice(0, 12);
  return {
    name: `static:${keyId}`,
    async generateDataKey(context) {
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', kek, iv);
      cipher.setAAD(aadOf(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { plaintext, wrapped: Buffer.concat([iv, body, cipher.getAuthTag()]) };
    },
    async unwrap(wrapped, context) {
      const bytes = Buffer.from(wrapped);
      const decipher = createDecipheriv('aes-256-gcm', kek, bytes.subarray(0, 12));
      decipher.setAAD(aadOf(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
    },
  };
}
