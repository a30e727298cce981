import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '#shared/config.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { safeIntegerParameter, textParameter } from '#shared/http/parameters.ts';
import { etagOf } from '#shared/http/preconditions.ts';
import { tracingFromEnvironment } from '#shared/observability/tracing.ts';
import { recogniseImage } from '#shared/pets/image-recognition.ts';
import { expectedOf } from '#shared/pets/pet-http.ts';
import { imageUrl, MAX_ADDITIONAL_METADATA_LENGTH } from '#shared/pets/pet-image-http.ts';
import { createPetImageStore } from '#shared/pets/pet-image-store.ts';
import { makeUploadPetImage } from '#shared/pets/pet-images.ts';
import { createPetRepository } from '#shared/pets/pet-repository.ts';
import { buckets } from '#shared/s3/buckets.ts';
import { createS3Client } from '#shared/s3/client.ts';
import { PRINTABLE_TEXT } from '#shared/schemas/common.ts';

/** What this function runs on: the DynamoDB client (a fault proxy's, in the fault tests) and the S3 client. */
export interface UploadPetImageAdapters {
  readonly client: DynamoDBDocumentClient;
  readonly s3: S3Client;
}

/**
 * The composition root of `POST /api/v3/pet/{petId}/uploadImage` (Petstore `uploadFile`): the
 * body's bytes, an image by its bytes, stored in S3 and its URL appended to the pet's photoUrls;
 * 200 with the Petstore's `ApiResponse` and the pet's new ETag.
 */
export function createUploadPetImageHandler({ client, s3 }: UploadPetImageAdapters) {
  const upload = makeUploadPetImage({
    pets: createPetRepository({ client, tableName: requireEnv(tables.pets.envVar) }),
    images: createPetImageStore({ client: s3, bucketName: requireEnv(buckets.images.envVar) }),
    recognise: recogniseImage,
  });
  return httpHandler<Buffer>({
    operationId: 'uploadFile',
    bytes: true,
    run: async (request) => {
      const petId = safeIntegerParameter('petId', request.pathParameters.petId);
      const metadata = request.query.additionalMetadata;
      const additionalMetadata =
        metadata === undefined
          ? undefined
          : textParameter('additionalMetadata', metadata, {
              min: 0,
              max: MAX_ADDITIONAL_METADATA_LENGTH,
              pattern: PRINTABLE_TEXT,
            });
      const baseUrl = request.baseUrl();
      const uploaded = await upload({
        petId,
        bytes: request.body,
        ...(additionalMetadata === undefined ? {} : { additionalMetadata }),
        expected: expectedOf(request),
        urlOf: (imageId) => imageUrl(baseUrl, petId, imageId),
      });
      return {
        statusCode: 200,
        // The Petstore's ApiResponse: what a Petstore client reads of an upload.
        body: {
          code: 200,
          type: uploaded.mediaType,
          message: `Stored ${uploaded.mediaType} of ${uploaded.size} bytes at ${uploaded.url}, now the last of the pet's photoUrls`,
        },
        headers: { etag: etagOf(uploaded.stored.revision) },
      };
    },
  });
}

/** Built once per container: the clients and their connections serve every invocation. */
export const handler = createUploadPetImageHandler({
  client: createDocumentClient({ tracing: await tracingFromEnvironment() }),
  s3: createS3Client(),
});
