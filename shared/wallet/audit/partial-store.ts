import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/*
 * Where the children of the deployed audit leave their partials for the reducer: an S3 object
 * each, since a partial holds a tally per account its segment touched and outgrows the 256 KB a
 * Step Functions state may pass on (docs/decisions/segmented-audit.md).
 */

/** The one key prefix the audit writes under: each function's grant names it, never the bucket. */
export const PARTIALS_PREFIX = 'audit-partials/';

/** The environment variable holding the partials bucket's name. */
export const PARTIALS_BUCKET_ENV = 'AUDIT_PARTIALS_BUCKET';

export const partialKey = (runId: string, segment: number) => `${PARTIALS_PREFIX}${runId}/${segment}.json`;

export interface PartialStore {
  put(runId: string, segment: number, text: string): Promise<void>;
  /** The partial's text; throws when a child left none. */
  get(runId: string, segment: number): Promise<string>;
  /** Removes a run's partials once decided: the bucket's lifecycle removes those of a run that was not. */
  remove(runId: string, segments: number): Promise<void>;
}

export function createS3PartialStore(s3: S3Client, bucket: string): PartialStore {
  return {
    async put(runId, segment, text) {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: partialKey(runId, segment),
          Body: text,
          ContentType: 'application/json',
        }),
      );
    },
    async get(runId, segment) {
      const { Body } = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: partialKey(runId, segment) }),
      );
      if (!Body) throw new Error(`No partial for segment ${segment} of run ${runId}`);
      return Body.transformToString();
    },
    async remove(runId, segments) {
      // DeleteObjects takes at most 1,000 keys a request.
      for (let first = 0; first < segments; first += 1_000) {
        const keys = Array.from({ length: Math.min(1_000, segments - first) }, (_, n) => ({
          Key: partialKey(runId, first + n),
        }));
        await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
      }
    },
  };
}
