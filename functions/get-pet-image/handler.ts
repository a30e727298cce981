import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter } from '#shared/http/parameters.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { IMAGE_EXTENSIONS } from '#shared/pets/image-type.ts';
import { imageIdParameter, imagePath } from '#shared/pets/pet-image-http.ts';
import { createPetImageStore } from '#shared/pets/pet-image-store.ts';
import { makeGetPetImage } from '#shared/pets/pet-images.ts';
import { createPetPhotoUrls } from '#shared/pets/pet-photo-urls.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { createS3Client } from '#shared/s3/client.ts';

/** An image read as a document may do nothing: no script, no request, no plugin, no form. */
const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; sandbox";

/**
 * How long a client may show the bytes without asking again. An image is withdrawn when its pet is
 * deleted or stops listing its URL, so a copy kept longer outlives the withdrawal by as much; a
 * minute still spares the page that shows a pet's photos again and again (a list, then the pet).
 */
export const IMAGE_CACHE_CONTROL = 'private, max-age=60';

/** What this function runs on: the S3 client, and the DynamoDB client (a fault proxy's, in the fault tests). */
export interface GetPetImageAdapters {
  readonly s3: S3Client;
  readonly client: DynamoDBDocumentClient;
}

/**
 * The composition root of `GET /api/v3/pet/{petId}/images/{imageId}`: the bytes of an image the
 * pet's photoUrls lists, with the media type they were recognised as; 404 when there is none, the
 * pet is gone, or it no longer lists the image.
 */
export function createGetPetImageHandler({ s3, client }: GetPetImageAdapters) {
  const getImage = makeGetPetImage({
    pets: createPetPhotoUrls({ client, tableName: requireEnv(tables.pets.envVar) }),
    images: createPetImageStore({ client: s3, bucketName: requireEnv(buckets.images.envVar) }),
  });
  return httpHandler({
    operationId: 'getPetImage',
    run: async ({ pathParameters }) => {
      const imageId = imageIdParameter(pathParameters.imageId);
      const petId = safeIntegerParameter('petId', pathParameters.petId);
      const image = await getImage({ petId, imageId, path: imagePath(petId, imageId) });
      return {
        statusCode: 200,
        body: image.bytes,
        // Private: reading the bytes takes a token.
        // nosniff: a browser shows the bytes as the image type they were recognised as, never as
        // whatever else it might guess from them (an upload is judged by its signature and header
        // only: the bytes after them may be anything, HTML included). And should it render them as
        // a document all the same, the policy runs no script and loads nothing (sandbox).
        headers: {
          'content-type': image.mediaType,
          'cache-control': IMAGE_CACHE_CONTROL,
          'x-content-type-options': 'nosniff',
          'content-security-policy': IMAGE_CONTENT_SECURITY_POLICY,
          'content-disposition': `inline; filename="${imageId}.${IMAGE_EXTENSIONS[image.mediaType]}"`,
        },
      };
    },
  });
}

/** Built once per container: the clients and their connections serve every invocation. */
export const handler = createGetPetImageHandler({
  s3: createS3Client(),
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
});
