import { S3Client } from '@aws-sdk/client-s3';
import { optionalEnv } from '../config.ts';
import { S3_ENDPOINT_ENV } from './buckets.ts';

/**
 * How long one request to S3 may take before it fails: an image of at most 4 MiB goes up in well
 * under a second from Lambda; a request still open after 5 s is stalled. The SDK tries a failed
 * request 3 times (its standard retry mode), and what still fails is a 503 for the client.
 */
const REQUEST_TIMEOUT_MS = 5_000;
const CONNECTION_TIMEOUT_MS = 1_000;

export interface S3ClientOptions {
  /** The local S3 server; `S3_ENDPOINT` when absent, Amazon S3 when neither. */
  readonly endpoint?: string;
}

/**
 * The S3 client a composition root makes once per container. With an endpoint (the local S3
 * server) requests go path-style (`<endpoint>/<bucket>/<key>`), since a local server has no DNS
 * name per bucket; on AWS the SDK's defaults hold.
 */
export function createS3Client(options: S3ClientOptions = {}): S3Client {
  const endpoint = options.endpoint ?? optionalEnv(S3_ENDPOINT_ENV);
  return new S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    maxAttempts: 3,
    // Checksums only where S3 demands one: a local server that sends none back is not a corruption.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      socketTimeout: REQUEST_TIMEOUT_MS,
    },
  });
}
