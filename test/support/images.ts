/**
 * Real, minimal images (one pixel each) in the four formats the API takes, as their encoders
 * write them: what the magic-byte check and the upload tests send.
 */
const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

export const TINY_IMAGES = {
  'image/png': fromBase64(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  ),
  'image/gif': fromBase64('R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw=='),
  'image/jpeg': fromBase64(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  ),
  'image/webp': fromBase64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='),
} as const;

/** A PNG of `size` bytes: the one-pixel PNG, then zeros (a reader stops at IEND; the signature is what is judged). */
export function pngOfSize(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set(TINY_IMAGES['image/png']);
  return bytes;
}

/** The one-pixel PNG with its header declaring `width` × `height` pixels: what a decompression bomb's header says. */
export function pngDeclaring(width: number, height: number): Uint8Array {
  const bytes = TINY_IMAGES['image/png'].slice();
  const header = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  header.setUint32(16, width);
  header.setUint32(20, height);
  return bytes;
}
