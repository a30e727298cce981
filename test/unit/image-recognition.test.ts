import { describe, expect, it } from 'vitest';
import { recogniseImage } from '#shared/pets/image-recognition.ts';
import { IMAGE_MEDIA_TYPES } from '#shared/pets/image-type.ts';
import { pngDeclaring, TINY_IMAGES } from '../support/images.ts';

const typeOf = (bytes: Uint8Array) => recogniseImage(bytes)?.mediaType;

describe('the magic-byte check of an uploaded image', () => {
  it.each(IMAGE_MEDIA_TYPES)('recognises a real %s by its bytes', (mediaType) => {
    expect(typeOf(TINY_IMAGES[mediaType])).toBe(mediaType);
  });

  it('recognises an image with bytes after it', () => {
    const padded = new Uint8Array(4096);
    padded.set(TINY_IMAGES['image/gif']);
    expect(typeOf(padded)).toBe('image/gif');
  });

  it('refuses text, whatever it claims to be', () => {
    expect(typeOf(new TextEncoder().encode('this is not a PNG, honest'))).toBeUndefined();
    expect(typeOf(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeUndefined();
  });

  it('refuses a file of another recognised type (a PDF, a ZIP)', () => {
    expect(typeOf(new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'))).toBeUndefined();
    const zip = new Uint8Array(64);
    zip.set([0x50, 0x4b, 0x03, 0x04]);
    expect(typeOf(zip)).toBeUndefined();
  });

  it('refuses a signature cut short, and no bytes at all', () => {
    expect(typeOf(TINY_IMAGES['image/png'].slice(0, 4))).toBeUndefined();
    expect(typeOf(TINY_IMAGES['image/webp'].slice(0, 10))).toBeUndefined();
    expect(typeOf(new Uint8Array())).toBeUndefined();
  });

  it('refuses a PNG signature whose header chunk is not there', () => {
    const broken = TINY_IMAGES['image/png'].slice();
    broken.set(new TextEncoder().encode('XXXX'), 12);
    expect(typeOf(broken)).toBeUndefined();
  });
});

describe('the dimensions of an uploaded image, as its header declares them', () => {
  it.each(IMAGE_MEDIA_TYPES)('are read from a real %s', (mediaType) => {
    expect(recogniseImage(TINY_IMAGES[mediaType])).toEqual({ mediaType, width: 1, height: 1 });
  });

  it('are whatever the header says, however few bytes follow it (the use case bounds them)', () => {
    expect(recogniseImage(pngDeclaring(100_000, 100_000))).toEqual({
      mediaType: 'image/png',
      width: 100_000,
      height: 100_000,
    });
  });

  it('refuse an image of no pixel at all', () => {
    expect(recogniseImage(pngDeclaring(0, 1))).toBeUndefined();
    const gif = TINY_IMAGES['image/gif'].slice();
    gif.set([0, 0, 0, 0], 6);
    expect(recogniseImage(gif)).toBeUndefined();
  });
});
