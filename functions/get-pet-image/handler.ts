import type { S3Client } from '@aws-sdk/client-s3';
import { requireEnv } from '#shared/config.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter } from '#shared/http/parameters.ts';
import { IMAGE_EXTENSIONS } from '#shared/pets/image-type.ts';
import { imageIdParameter } from '#shared/pets/pet-image-http.ts';
import { createPetImageStore } from '#shared/pets/pet-image-store.ts';
import { makeGetPetImage } from '#shared/pets/pet-images.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { createS3Client } from '#shared/s3/client.ts';

/** An image read as a document may do nothing: no script, no request, no plugin, no form. */
const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; sandbox";

/** What this function runs on: the S3 client. */
export interface GetPetImageAdapters {
  readonly s3: S3Client;
}

/**
 * The composition root of `GET /api/v3/pet/{petId}/images/{imageId}`: the bytes of an image a
 * pet's photoUrls names, with the media type they were recognised as; 404 when there is none.
 */
export function createGetPetImageHandler({ s3 }: GetPetImageAdapters) {
  const getImage = makeGetPetImage({
    images: createPetImageStore({ client: s3, bucketName: requireEnv(buckets.images.envVar) }),
  });
  return httpHandler({
    operationId: 'getPetImage',
    run: async ({ pathParameters }) => {
      const imageId = imageIdParameter(pathParameters.imageId);
      const image = await getImage({ petId: safeIntegerParameter('petId', pathParameters.petId), imageId });
      return {
        statusCode: 200,
        body: image.bytes,
        // An image id is never reused, so its bytes never change: a client may keep them (privately:
        // reading them takes a token) instead of asking again.
        // nosniff: a browser shows the bytes as the image type they were recognised as, never as
        // whatever else it might guess from them (an upload is judged by its signature and header
        // only: the bytes after them may be anything, HTML included). And should it render them as
        // a document all the same, the policy runs no script and loads nothing (sandbox).
        headers: {
          'content-type': image.mediaType,
          'cache-control': 'private, max-age=86400, immutable',
          'x-content-type-options': 'nosniff',
          'content-security-policy': IMAGE_CONTENT_SECURITY_POLICY,
          'content-disposition': `inline; filename="${imageId}.${IMAGE_EXTENSIONS[image.mediaType]}"`,
        },
      };
    },
  });
}

/** Built once per container: the client and its connections serve every invocation. */
export const handler = createGetPetImageHandler({ s3: createS3Client() });
