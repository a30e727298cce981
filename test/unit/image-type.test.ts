import { describe, expect, it } from 'vitest';
import { IMAGE_MEDIA_TYPES, imageTypeOf } from '#shared/pets/image-type.ts';
import { TINY_IMAGES } from '../support/images.ts';

describe('the magic-byte check of an uploaded image', () => {
  it.each(IMAGE_MEDIA_TYPES)('recognises a real %s by its bytes', async (mediaType) => {
    expect(await imageTypeOf(TINY_IMAGES[mediaType])).toBe(mediaType);
  });

  it('recognises an image with bytes after it', async () => {
    const padded = new Uint8Array(4096);
    padded.set(TINY_IMAGES['image/gif']);
    expect(await imageTypeOf(padded)).toBe('image/gif');
  });

  it('refuses text, whatever it claims to be', async () => {
    expect(await imageTypeOf(new TextEncoder().encode('this is not a PNG, honest'))).toBeUndefined();
    expect(
      await imageTypeOf(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')),
    ).toBeUndefined();
  });

  it('refuses a file of another recognised type (a PDF, a ZIP)', async () => {
    expect(await imageTypeOf(new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'))).toBeUndefined();
    const zip = new Uint8Array(64);
    zip.set([0x50, 0x4b, 0x03, 0x04]);
    expect(await imageTypeOf(zip)).toBeUndefined();
  });

  it('refuses a signature cut short, and no bytes at all', async () => {
    expect(await imageTypeOf(TINY_IMAGES['image/png'].slice(0, 4))).toBeUndefined();
    expect(await imageTypeOf(TINY_IMAGES['image/webp'].slice(0, 10))).toBeUndefined();
    expect(await imageTypeOf(new Uint8Array())).toBeUndefined();
  });
});
