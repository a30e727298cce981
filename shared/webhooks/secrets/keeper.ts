/**
 * Which keeper seals the signing secrets, read once at cold start: AWS KMS when
 * `WEBHOOK_SECRETS_KMS_KEY_ID` is set (deployed), else the key in `WEBHOOK_SECRETS_KEY` (the local
 * stack and the tests). A function given neither cannot seal or open a secret and fails its init.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { type Environment, optionalEnv, requireEnv } from '../../config.ts';
import { REQUEST_TIMEOUT_MS } from '../../dynamodb/client.ts';
import { createEnvelopeSealer, type SecretSealer } from './envelope.ts';
import { createKmsKeyWrapper } from './kms-key-wrapper.ts';
import { createStaticKeyWrapper } from './static-key-wrapper.ts';

export const KMS_KEY_ENV = 'WEBHOOK_SECRETS_KMS_KEY_ID';
export const STATIC_KEY_ENV = 'WEBHOOK_SECRETS_KEY';

export function secretSealerFromEnv(env: Environment = process.env): SecretSealer {
  const kmsKeyId = optionalEnv(KMS_KEY_ENV, env);
  if (kmsKeyId !== undefined) {
    // As the DynamoDB client (shared/dynamodb/client.ts): one attempt per call, bounded in time, so
    // that withRetries (in the wrapper) decides, and a stalled KMS ends in a 503, not a timeout.
    const client = new KMSClient({
      maxAttempts: 1,
      requestHandler: {
        connectionTimeout: 1_000,
        requestTimeout: REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
        socketTimeout: REQUEST_TIMEOUT_MS,
      },
    });
    return createEnvelopeSealer(createKmsKeyWrapper(client, kmsKeyId));
  }
  return createEnvelopeSealer(createStaticKeyWrapper(requireEnv(STATIC_KEY_ENV, env)));
}
