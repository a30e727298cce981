import { fileTypeFromBuffer } from 'file-type';

/**
 * What an uploaded image is, judged by its bytes (its magic number), never by the Content-Type the
 * client sent: `file-type` reads the signature, and only the four web image formats pass. Why a
 * library and this one: docs/decisions/pet-images.md.
 */

/** The image formats a pet's photo may be, by media type, with the extension its URL could carry. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/** The most bytes one image may have: 4 MiB, whose base64 (5.6 MB) fits Lambda's 6 MB event with its headers. */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;

/**
 * `file-type` names an animated PNG `image/apng`; its bytes are a PNG that every PNG reader shows
 * (its first frame at least), so it is kept as one.
 */
const ALIASES: Readonly<Record<string, ImageMediaType>> = { 'image/apng': 'image/png' };

/** The media type of `bytes` if they are one of {@link IMAGE_MEDIA_TYPES}, else `undefined`. */
export async function imageTypeOf(bytes: Uint8Array): Promise<ImageMediaType | undefined> {
  const detected = await fileTypeFromBuffer(bytes);
  if (detected === undefined) return undefined;
  const mime = ALIASES[detected.mime] ?? detected.mime;
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(mime) ? (mime as ImageMediaType) : undefined;
}
