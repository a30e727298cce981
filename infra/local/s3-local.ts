/**
 * The local S3: s3rver (npm), a maintained-enough S3-compatible server in this process, with the
 * buckets of `shared/s3/buckets.ts`. s3rver keeps objects in a directory: a temporary one, removed
 * at stop, unless `directory` is given (`npm start -- --persist`). Why s3rver:
 * docs/decisions/pet-images.md.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types: only its constructor, run() and close() are used.
import S3rver from 's3rver';
// @ts-expect-error As above; its one account, to which the local credentials are added.
import { DUMMY_ACCOUNT } from 's3rver/lib/models/account.js';
import { buckets, S3_ENDPOINT_ENV } from '#shared/s3/buckets.ts';
import { LOCAL_AWS_ENV } from './dynamodb-local.ts';

export interface S3Local {
  readonly endpoint: string;
  /** Where the objects are kept; removed at stop when it was a temporary directory. */
  readonly directory: string;
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

/** Starts s3rver on a free loopback port, keeping its objects in `directory` (a temporary one when absent). */
export async function startS3Local(options: { directory?: string } = {}): Promise<S3Local> {
  const temporary = options.directory === undefined;
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'wallet-catalog-s3-')));
  await mkdir(directory, { recursive: true });
  // s3rver checks every request's signature against the keys of its one account, which knows only
  // its own pair: the functions sign with the local credentials DynamoDB Local takes too.
  (DUMMY_ACCOUNT as { createKeyPair(id: string, secret: string): void }).createKeyPair(
    LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
    LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
  );
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
  }) as S3rverInstance;
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await server.close();
      if (temporary) await rm(directory, { recursive: true, force: true });
    })();
    return stopped;
  };
  return { endpoint, directory, stop };
}

/** How a client of the local S3 is configured: path-style, local credentials. */
export const localS3ClientConfig = (endpoint: string) => ({
  endpoint,
  forcePathStyle: true,
  region: LOCAL_AWS_ENV.AWS_REGION,
  credentials: {
    accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
    secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
  },
});

/**
 * Creates every bucket of `shared/s3/buckets.ts` (if missing) under `<prefix>-<name>`, and returns
 * the environment variables through which the functions find them and the server.
 */
export async function ensureBuckets(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = new S3Client(localS3ClientConfig(endpoint));
  const env: Record<string, string> = { [S3_ENDPOINT_ENV]: endpoint };
  try {
    for (const [name, definition] of Object.entries(buckets)) {
      // S3 bucket names: lower case, digits, dots and hyphens.
      const physicalName = `${prefix}-${name}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
      env[definition.envVar] = physicalName;
      try {
        await client.send(new HeadBucketCommand({ Bucket: physicalName }));
      } catch {
        await client.send(new CreateBucketCommand({ Bucket: physicalName }));
      }
    }
  } finally {
    client.destroy();
  }
  return env;
}
