import { imageSize } from 'image-size';
import type { ImageMediaType } from './image-type.ts';

/**
 * What an uploaded image is, judged by its bytes (its magic number), never by the Content-Type the
 * client sent: `image-size` reads the signature and the header that follows it, and only the four
 * web image formats pass. Why a library and this one: docs/decisions/pet-images.md. A module of its
 * own, imported by the upload's composition root only: the parser is no byte of the reading function.
 */

/** `image-size`'s names of the formats taken. */
const MEDIA_TYPES: Readonly<Record<string, ImageMediaType>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/**
 * The media type of `bytes` if they are one of {@link IMAGE_MEDIA_TYPES}, else `undefined`: also
 * when the signature is right but the header after it is cut short or broken (`image-size` then
 * throws, as for a format it does not know).
 */
export function imageTypeOf(bytes: Uint8Array): ImageMediaType | undefined {
  try {
    const { type } = imageSize(bytes);
    return type !== undefined && Object.hasOwn(MEDIA_TYPES, type) ? MEDIA_TYPES[type] : undefined;
  } catch {
    return undefined;
  }
}
