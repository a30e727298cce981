/**
 * The deployed keeper of the key-encryption key: AWS KMS. `GenerateDataKey` gives each secret a
 * data key of its own, `Decrypt` opens it again; the encryption context names the wallet and the
 * endpoint, so CloudTrail says whose secret was opened and a data key of one endpoint opens no
 * other's. The functions that register or rotate may only generate, the dispatcher may only
 * decrypt (one grant each).
 */
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { withRetries } from '../../dynamodb/retry.ts';
import type { KeyWrapper, SecretContext } from './envelope.ts';

/** The encryption context's `purpose`: IAM grants name it, so the key serves nothing else through them. */
export const WEBHOOK_SECRET_PURPOSE = 'webhook-signing-secret';

const encryptionContext = (context: SecretContext) => ({
  purpose: WEBHOOK_SECRET_PURPOSE,
  address: context.address,
  endpointId: context.endpointId,
});

export function createKmsKeyWrapper(client: KMSClient, keyId: string): KeyWrapper {
  return {
    name: `kms:${keyId}`,
    async generateDataKey(context) {
      // KMS throttled, failing or stalled: retried as DynamoDB is, then a 503 with Retry-After.
      const answer = await withRetries(() =>
        client.send(
          new GenerateDataKeyCommand({
            KeyId: keyId,
            KeySpec: 'AES_256',
            EncryptionContext: encryptionContext(context),
          }),
        ),
      );
      if (!answer.Plaintext || !answer.CiphertextBlob)
        throw new Error('KMS answered GenerateDataKey without a key');
      return { plaintext: answer.Plaintext, wrapped: answer.CiphertextBlob };
    },
    async unwrap(wrapped, context) {
      const answer = await withRetries(() =>
        client.send(
          new DecryptCommand({
            KeyId: keyId,
            CiphertextBlob: wrapped,
            EncryptionContext: encryptionContext(context),
          }),
        ),
      );
      if (!answer.Plaintext) throw new Error('KMS answered Decrypt without a key');
      return answer.Plaintext;
    },
  };
}
