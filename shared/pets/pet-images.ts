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
  /** The image stored under these ids, or `undefined`. */
  get(petId: number, imageId: string): Promise<PetImage | undefined>;
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

/** The image to read: ids the edge already checked the form of. */
export interface GetPetImageCommand {
  readonly petId: number;
  readonly imageId: string;
}

/** Reads an image of a pet; {@link NotFoundError} when there is none under these ids. */
export const makeGetPetImage =
  ({ images }: { readonly images: Pick<PetImageStore, 'get'> }) =>
  async ({ petId, imageId }: GetPetImageCommand): Promise<PetImage> => {
    const image = await images.get(petId, imageId);
    if (!image) throw new NotFoundError(`No image ${imageId} of the pet with id ${petId}`);
    return image;
  };
