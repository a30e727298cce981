import { describe, expect, it } from 'vitest';
import { imageTypeOf } from '#shared/pets/image-recognition.ts';
import { IMAGE_MEDIA_TYPES } from '#shared/pets/image-type.ts';
import { TINY_IMAGES } from '../support/images.ts';

describe('the magic-byte check of an uploaded image', () => {
  it.each(IMAGE_MEDIA_TYPES)('recognises a real %s by its bytes', (mediaType) => {
    expect(imageTypeOf(TINY_IMAGES[mediaType])).toBe(mediaType);
  });

  it('recognises an image with bytes after it', () => {
    const padded = new Uint8Array(4096);
    padded.set(TINY_IMAGES['image/gif']);
    expect(imageTypeOf(padded)).toBe('image/gif');
  });

  it('refuses text, whatever it claims to be', () => {
    expect(imageTypeOf(new TextEncoder().encode('this is not a PNG, honest'))).toBeUndefined();
    expect(
      imageTypeOf(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')),
    ).toBeUndefined();
  });

  it('refuses a file of another recognised type (a PDF, a ZIP)', () => {
    expect(imageTypeOf(new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'))).toBeUndefined();
    const zip = new Uint8Array(64);
    zip.set([0x50, 0x4b, 0x03, 0x04]);
    expect(imageTypeOf(zip)).toBeUndefined();
  });

  it('refuses a signature cut short, and no bytes at all', () => {
    expect(imageTypeOf(TINY_IMAGES['image/png'].slice(0, 4))).toBeUndefined();
    expect(imageTypeOf(TINY_IMAGES['image/webp'].slice(0, 10))).toBeUndefined();
    expect(imageTypeOf(new Uint8Array())).toBeUndefined();
  });

  it('refuses a PNG signature whose header chunk is not there', () => {
    const broken = TINY_IMAGES['image/png'].slice();
    broken.set(new TextEncoder().encode('XXXX'), 12);
    expect(imageTypeOf(broken)).toBeUndefined();
  });
});
