import { GIF } from 'image-size/types/gif';
import { JPG } from 'image-size/types/jpg';
import { PNG } from 'image-size/types/png';
import { WEBP } from 'image-size/types/webp';
import type { ImageMediaType } from './image-type.ts';

/**
 * What an uploaded image is, judged by its bytes (its magic number), never by the Content-Type the
 * client sent: `image-size` reads the signature and the header that follows it, and only the four
 * web image formats pass. Why a library and this one: docs/decisions/pet-images.md. A module of its
 * own, imported by the upload's composition root only: the parser is no byte of the reading function.
 */

/**
 * `image-size`'s parsers of the formats taken, each by itself: its whole detector would bundle
 * twenty parsers (BMP, ICO, TIFF, PSD, SVG…) that could only ever refuse.
 */
const FORMATS: readonly (readonly [typeof PNG, ImageMediaType])[] = [
  [PNG, 'image/png'],
  [JPG, 'image/jpeg'],
  [GIF, 'image/gif'],
  [WEBP, 'image/webp'],
];

/** An image as its header describes it. */
export interface RecognisedImage {
  readonly mediaType: ImageMediaType;
  readonly width: number;
  readonly height: number;
}

/**
 * What `bytes` are if they are one of {@link IMAGE_MEDIA_TYPES}, with the dimensions their header
 * declares, else `undefined`: also when the signature is right but the header after it is cut
 * short, broken (`image-size` then throws, as for a format it does not know) or declares no pixel.
 */
export function recogniseImage(bytes: Uint8Array): RecognisedImage | undefined {
  for (const [format, mediaType] of FORMATS) {
    try {
      if (!format.validate(bytes)) continue;
      const { width, height } = format.calculate(bytes);
      if (!(width > 0 && height > 0)) return undefined;
      return { mediaType, width, height };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
