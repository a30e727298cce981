import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { TemporarilyUnavailableError } from '../errors.ts';
import { ANSWER_MARGIN_MS, requestDeadline } from '../request-deadline.ts';
import { buckets } from '../s3/buckets.ts';
import { IMAGE_MEDIA_TYPES, type ImageMediaType } from './image-type.ts';
import type { PetImage, PetImageStore } from './pet-images.ts';

export interface PetImageBucket {
  readonly client: S3Client;
  /** The physical name of the images bucket (`buckets.images`). */
  readonly bucketName: string;
}

/** The key of a pet's image: under the one prefix the upload function may write to. */
export const imageKey = (petId: number, imageId: string): string =>
  `${buckets.images.prefix}${petId}/${imageId}`;

/** The user metadata an image keeps of `additionalMetadata`: base64url of its UTF-8, as S3 metadata must be ASCII. */
const METADATA_KEY = 'additional-metadata';

/**
 * A fault of S3 or of the way to it (throttling, 5xx, a timeout, a refused connection) after the
 * SDK's own retries: a 503 with Retry-After for the client. A fault of ours (access denied, no
 * such bucket) stays an error: it is a deployment to fix, not a moment to wait.
 */
function unavailable(error: unknown): unknown {
  const fault = (error as { $fault?: string; $metadata?: { httpStatusCode?: number } }) ?? {};
  const status = fault.$metadata?.httpStatusCode;
  const serverSide = fault.$fault === 'server' || status === 429 || status === 503 || status === undefined;
  return serverSide
    ? new TemporarilyUnavailableError('The image store is unavailable; retry in a moment', 1, {
        cause: error,
      })
    : error;
}

/**
 * What ends an S3 call, its tries included, in time to answer the request: the SDK's 3 tries of
 * up to 5 s each (`shared/s3/client.ts`) would outlast the function's 10 s, and a stalled S3 would
 * be the gateway's 504 instead of our 503. Outside a request, none.
 */
function beforeDeadline(): { abortSignal?: AbortSignal } {
  const deadline = requestDeadline();
  if (deadline === undefined) return {};
  return { abortSignal: AbortSignal.timeout(Math.max(1, deadline - ANSWER_MARGIN_MS - Date.now())) };
}

/**
 * {@link beforeDeadline}, or earlier when `stop` aborts: one controller that either aborts, not
 * `AbortSignal.any`, which cost a read some 18 µs of the warm benchmark's stub run (41 against 23),
 * most of the read's own time. `end` clears the timer once the call is over.
 */
function beforeDeadlineOr(stop: AbortSignal): { abortSignal: AbortSignal; end: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort(stop.aborted ? stop.reason : undefined);
  if (stop.aborted) abort();
  stop.addEventListener('abort', abort, { once: true });
  const deadline = requestDeadline();
  const timer =
    deadline === undefined
      ? undefined
      : setTimeout(abort, Math.max(1, deadline - ANSWER_MARGIN_MS - Date.now()));
  timer?.unref();
  return {
    abortSignal: controller.signal,
    end: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', abort);
    },
  };
}

/** The pets' images in S3: one object per image, its media type as the object's Content-Type. */
export function createPetImageStore({ client, bucketName }: PetImageBucket): PetImageStore {
  /** The object at `key`, its bytes included, within `options`' signal; `undefined` when there is none. */
  async function read(key: string, options: { abortSignal?: AbortSignal }): Promise<PetImage | undefined> {
    let answer: GetObjectCommandOutput;
    try {
      answer = await client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }), {
        ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
      });
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw unavailable(error);
    }
    const mediaType = answer.ContentType;
    // Only this store writes under the prefix, and only images: anything else is no image of ours.
    if (!(IMAGE_MEDIA_TYPES as readonly (string | undefined)[]).includes(mediaType) || !answer.Body) {
      throw new Error(`The object ${key} is not an image this store wrote (${mediaType})`);
    }
    try {
      return { bytes: await answer.Body.transformToByteArray(), mediaType: mediaType as ImageMediaType };
    } catch (error) {
      throw unavailable(error);
    }
  }

  return {
    async put(petId, imageId, { bytes, mediaType }, additionalMetadata): Promise<void> {
      try {
        await client.send(
          new PutObjectCommand({
            Bucket: bucketName,
            Key: imageKey(petId, imageId),
            Body: bytes,
            ContentType: mediaType,
            ContentLength: bytes.length,
            ...(additionalMetadata === undefined
              ? {}
              : { Metadata: { [METADATA_KEY]: Buffer.from(additionalMetadata).toString('base64url') } }),
          }),
          beforeDeadline(),
        );
      } catch (error) {
        throw unavailable(error);
      }
    },

    async get(petId, imageId, signal): Promise<PetImage | undefined> {
      const until = signal === undefined ? undefined : beforeDeadlineOr(signal);
      try {
        return await read(imageKey(petId, imageId), until === undefined ? beforeDeadline() : until);
      } finally {
        until?.end();
      }
    },
  };
}
