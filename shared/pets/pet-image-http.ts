import { InvalidParameterError } from '../errors.ts';
import { ROUTE_PATHS } from '../route-scopes.generated.js';
import { IMAGE_ID_PATTERN } from './pet-images.ts';

/** The longest `additionalMetadata` an upload takes, in code points (kept with the image, base64url, within S3's 2 KB of metadata). */
export const MAX_ADDITIONAL_METADATA_LENGTH = 256;

/** The read-back route's path of a pet's image, under whatever base URL the API was addressed by. */
export const imagePath = (petId: number, imageId: string): string =>
  ROUTE_PATHS.getPetImage.replace('{petId}', String(petId)).replace('{imageId}', imageId);

/** The URL a pet's image is served at: the read-back route under the API's base URL as the client addressed it. */
export const imageUrl = (baseUrl: string, petId: number, imageId: string): string =>
  `${baseUrl}${imagePath(petId, imageId)}`;

/** The `imageId` path parameter: an id as uploads draw them, else an {@link InvalidParameterError}. */
export function imageIdParameter(raw: string | undefined): string {
  if (raw === undefined || !IMAGE_ID_PATTERN.test(raw)) {
    throw new InvalidParameterError(
      'imageId must be an image id as photoUrls give them: 22 characters of base64url',
    );
  }
  return raw;
}
