/**
 * The baseline of a function whose second grant is on the images bucket (`route.images`): the
 * DynamoDB baseline, plus the S3 client and the two commands that grant allows, constructed at init
 * as the functions construct theirs. Bundle size only (bench/budgets.ts): an image function is held
 * to 1.25 × what any function doing its job with the SDK must carry, not to a DynamoDB-only one.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export { handler } from './handler.ts';

export const s3 = new S3Client({});
export const commands = [GetObjectCommand, PutObjectCommand];
