import { randomBytes } from 'node:crypto';
import {
  MalformedBodyError,
  NotFoundError,
  PayloadTooLargeError,
  PetPhotoLimitError,
  PreconditionFailedError,
  UnsupportedMediaTypeError,
} from '../errors.ts';
import { petSchema } from '../schemas/pet.ts';
import type { RecognisedImage } from './image-recognition.ts';
import {
  IMAGE_MEDIA_TYPES,
  type ImageMediaType,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
} from './image-type.ts';
import type { Pet } from './pet.ts';
import { changePet, type Expected, holds } from './pet-changes.ts';
import type { PetRepository, StoredPet } from './pets.ts';

/** An image as stored: its bytes and the media type its bytes were recognised as. */
export interface PetImage {
  readonly bytes: Uint8Array;
  readonly mediaType: ImageMediaType;
}

/** Where the pets' images are kept (`pet-image-store.ts` on S3; a map in the unit tests). */
export interface PetImageStore {
  /** Stores a pet's image under a new image id. */
  put(petId: number, imageId: string, image: PetImage, additionalMetadata: string | undefined): Promise<void>;
  /** The image stored under these ids, or `undefined`; `signal` stops the read when its answer is no longer wanted. */
  get(petId: number, imageId: string, signal?: AbortSignal): Promise<PetImage | undefined>;
}

/** `POST /pet/{petId}/uploadImage`: the body's bytes, for the pet with this id. */
export interface UploadPetImageCommand {
  readonly petId: number;
  readonly bytes: Uint8Array;
  readonly additionalMetadata?: string;
  readonly expected?: Expected;
  /** The URL the API serves the image with this id at (the edge knows the API's address). */
  readonly urlOf: (imageId: string) => string;
}

/** What an upload did: the pet as stored now (its new photo URL last), and the image's URL and type. */
export interface UploadedImage {
  readonly stored: StoredPet;
  readonly url: string;
  readonly mediaType: ImageMediaType;
  readonly size: number;
}

/** The most photo URLs a pet lists (the schema's bound); an upload past it is refused. */
export const MAX_PHOTO_URLS = petSchema.properties.photoUrls.maxItems;

/** A new image id: 128 random bits, base64url (22 characters). */
export const newImageId = (): string => randomBytes(16).toString('base64url');

/** An image id as {@link newImageId} draws them. */
export const IMAGE_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export interface UploadPetImageDependencies {
  readonly pets: PetRepository;
  readonly images: Pick<PetImageStore, 'put'>;
  /**
   * What image `bytes` are, by their bytes: `recogniseImage` of `image-recognition.ts`, handed over
   * by the upload's composition root so that the reading function does not carry its parser.
   */
  readonly recognise: (bytes: Uint8Array) => RecognisedImage | undefined;
  /** Draws a new image id ({@link newImageId}). */
  readonly imageIds?: () => string;
}

/**
 * Stores an image of a pet and appends its URL to the pet's `photoUrls`. Everything that can be
 * refused is refused before a byte is stored: the body (not empty, at most {@link MAX_IMAGE_BYTES},
 * an image by its bytes, of at most {@link MAX_IMAGE_PIXELS}), the pet (there, at the revision `If-Match` names, with room for another
 * photo). Then the image goes to the store under a new id, and its URL onto the pet by the same
 * conditional write as every change of a pet (`changePet`): a pet deleted or filled up in between
 * is refused as above, and the image stored for it is then an orphan nobody was given the URL of
 * (docs/decisions/pet-images.md).
 */
export const makeUploadPetImage =
  ({ pets, images, recognise, imageIds = newImageId }: UploadPetImageDependencies) =>
  async ({
    petId,
    bytes,
    additionalMetadata,
    expected,
    urlOf,
  }: UploadPetImageCommand): Promise<UploadedImage> => {
    if (bytes.length === 0) throw new MalformedBodyError("The request body is empty: send the image's bytes");
    if (bytes.length > MAX_IMAGE_BYTES) {
      throw new PayloadTooLargeError(
        `An image may have at most 4 MiB (${MAX_IMAGE_BYTES} bytes), so that its base64 fits Lambda's 6 MB invocation payload; this one has ${bytes.length}`,
      );
    }
    const image = recognise(bytes);
    if (image === undefined) {
      throw new UnsupportedMediaTypeError(
        `The body is not an image of a type this API takes (${IMAGE_MEDIA_TYPES.join(', ')}), judged by its bytes whatever its Content-Type`,
      );
    }
    const { mediaType, width, height } = image;
    if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS) {
      throw new PayloadTooLargeError(
        `An image may have at most ${MAX_IMAGE_SIDE} pixels a side and ${MAX_IMAGE_PIXELS} in all, which is what every client showing it decodes; this one declares ${width} × ${height}`,
      );
    }
    const read = await pets.find(petId);
    if (!read) throw new NotFoundError(`No pet with id ${petId}`);
    if (!holds(expected, read.revision)) {
      throw new PreconditionFailedError(
        `The pet with id ${petId} has changed since the ETag in If-Match: read it again and retry`,
      );
    }
    withRoom(read.pet);

    const imageId = imageIds();
    const url = urlOf(imageId);
    await images.put(petId, imageId, { bytes, mediaType }, additionalMetadata);
    const stored = await changePet(
      pets,
      petId,
      expected,
      async (current) => {
        const pet: Pet = { ...current.pet, photoUrls: [...withRoom(current.pet).photoUrls, url] };
        const revision = await pets.replace(current, pet);
        return revision === undefined ? undefined : { pet, revision };
      },
      read,
    );
    return { stored, url, mediaType, size: bytes.length };
  };

/** The pet, if it can list one more photo URL; {@link PetPhotoLimitError} otherwise. */
function withRoom(pet: Pet): Pet {
  if (pet.photoUrls.length >= MAX_PHOTO_URLS) {
    throw new PetPhotoLimitError(
      `The pet with id ${pet.id} already lists ${MAX_PHOTO_URLS} photo URLs, the most a pet may: remove one (PUT /pet) before uploading another image`,
    );
  }
  return pet;
}

/** The photo URLs a pet lists now (`pet-photo-urls.ts` on DynamoDB; a map in test/unit/pet-image-read.test.ts). */
export interface PetPhotoUrls {
  /** The pet's `photoUrls`, read strongly consistent; `undefined` when there is no such pet. */
  photoUrlsOf(id: number): Promise<readonly string[] | undefined>;
}

/** The image to read: ids the edge already checked the form of. */
export interface GetPetImageCommand {
  readonly petId: number;
  readonly imageId: string;
  /** The read-back route's path of this image, which a photo URL naming it ends with. */
  readonly path: string;
}

export interface GetPetImageDependencies {
  readonly pets: PetPhotoUrls;
  readonly images: Pick<PetImageStore, 'get'>;
}

/**
 * Reads an image of a pet while the pet lists it: {@link NotFoundError} when there is no such
 * image, and as well when the pet is gone (deleted, or deleted and added again under its id) or no
 * longer lists the image's URL. The URL is what the API gave out, and withdrawing it withdraws the
 * image; the object itself stays in S3 (nothing may delete it, docs/decisions/pet-images.md).
 * A photo URL names the image when it ends with its path, whatever host and base path the uploader
 * addressed the API by: the read may come by the other (a stage URL, a custom domain).
 *
 * The pet and the object are read at once, one round trip instead of two; a pet that does not list
 * the image stops the object's read, whose bytes would only be thrown away.
 */
export const makeGetPetImage =
  ({ pets, images }: GetPetImageDependencies) =>
  async ({ petId, imageId, path }: GetPetImageCommand): Promise<PetImage> => {
    const refused = new AbortController();
    const listed = pets.photoUrlsOf(petId).then((urls) => {
      const lists = urls?.some((url) => url.endsWith(path)) ?? false;
      if (!lists) refused.abort();
      return lists;
    });
    const [pet, object] = await Promise.allSettled([listed, images.get(petId, imageId, refused.signal)]);
    const missing = new NotFoundError(`No image ${imageId} of the pet with id ${petId}`);
    // Either read alone may know that there is nothing to serve: then the other's fault does not matter.
    if (pet.status === 'rejected') {
      if (object.status === 'fulfilled' && object.value === undefined) throw missing;
      throw pet.reason;
    }
    if (!pet.value) throw missing;
    if (object.status === 'rejected') throw object.reason;
    if (object.value === undefined) throw missing;
    return object.value;
  };
