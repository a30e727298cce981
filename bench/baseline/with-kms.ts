/**
 * The baseline of a function that seals webhook secrets (`route.signingSecrets`): the DynamoDB
 * baseline, plus the KMS client and the one command that grant allows (GenerateDataKey). Bundle size
 * only, as `with-s3.ts`.
 */
import { GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';

export { handler } from './handler.ts';

export const kms = new KMSClient({});
export const commands = [GenerateDataKeyCommand];
