/* The image formats an upload may be, and its bound; recognising them: `image-recognition.ts`. */

/** The image formats a pet's photo may be, by media type. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/** The file name extension of each, for the name a client saves an image under. */
export const IMAGE_EXTENSIONS: Readonly<Record<ImageMediaType, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** The most bytes one image may have: 4 MiB, whose base64 (5.6 MB) fits Lambda's 6 MB event with its headers. */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;

/**
 * The most pixels one image may have, by its header, and the most on a side: what every client
 * showing the pet's photos decodes (4 bytes a pixel: 200 MB). A 48-megapixel phone photo passes; a
 * few KB of PNG declaring 100,000 × 100,000 pixels (a decompression bomb) does not.
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
export const MAX_IMAGE_SIDE = 16_384;
