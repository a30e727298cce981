/**
 * The S3 buckets, by logical name: read by CDK (the stateful stack), the local S3 server and the
 * functions' environment, as `shared/dynamodb/tables.ts` is for the tables.
 */

export interface BucketDefinition {
  /** The environment variable holding the bucket's physical name. */
  readonly envVar: string;
  readonly description: string;
  /**
   * The one key prefix the service writes under; a function's grant on objects names it, never the
   * whole bucket (the read function's `s3:ListBucket` is on the bucket: `Route.images` says why).
   */
  readonly prefix: string;
}

export const buckets = {
  images: {
    envVar: 'IMAGES_BUCKET',
    description: "The pets' images: `pets/<petId>/<imageId>`, the bytes as uploaded, with their media type",
    prefix: 'pets/',
  },
} as const satisfies Record<string, BucketDefinition>;

export type BucketName = keyof typeof buckets;

/** Where a function reaches S3 when it is not Amazon S3 (the local S3 server); unset on AWS. */
export const S3_ENDPOINT_ENV = 'S3_ENDPOINT';
