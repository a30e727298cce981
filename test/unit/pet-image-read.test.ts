import { describe, expect, it } from 'vitest';
import { NotFoundError, TemporarilyUnavailableError } from '#shared/errors.ts';
import { imagePath } from '#shared/pets/pet-image-http.ts';
import { makeGetPetImage, type PetImage, type PetImageStore } from '#shared/pets/pet-images.ts';

/*
 * The read of an image beside its pet's photoUrls (makeGetPetImage): which of the two answers
 * decides, when one of them fails or knows there is nothing to serve. The real reads run in
 * test/integration/pet-image-withdrawal.test.ts.
 */
const PET = 11;
const IMAGE = 'AAAAAAAAAAAAAAAAAAAAAA';
const path = imagePath(PET, IMAGE);
const image: PetImage = { bytes: new Uint8Array([1, 2, 3]), mediaType: 'image/png' };
const down = () => new TemporarilyUnavailableError('down', 1);

/** A store answering `answer`, recording whether the read was stopped by the time it answered. */
function store(answer: () => Promise<PetImage | undefined>) {
  const seen: { signal?: AbortSignal | undefined } = {};
  const images: Pick<PetImageStore, 'get'> = {
    get: (_petId, _imageId, signal) => {
      seen.signal = signal;
      return answer();
    },
  };
  return { images, seen };
}

const read = (
  urls: () => Promise<readonly string[] | undefined>,
  answer: () => Promise<PetImage | undefined>,
) => {
  const { images, seen } = store(answer);
  const getImage = makeGetPetImage({ pets: { photoUrlsOf: urls }, images });
  return { result: getImage({ petId: PET, imageId: IMAGE, path }), seen };
};

/** An answer that comes after the pet's. */
const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 20));

describe('reading an image beside its pet', () => {
  it('serves an image whose path a photo URL ends with, whatever its host and base path', async () => {
    for (const url of [
      `https://api.example.com${path}`,
      `https://abc.execute-api.eu-west-1.amazonaws.com/prod${path}`,
    ]) {
      await expect(
        read(
          async () => [url],
          async () => image,
        ).result,
      ).resolves.toBe(image);
    }
  });

  it("refuses an image the pet does not list, another pet's path among its URLs included, and stops the object's read", async () => {
    for (const urls of [
      undefined,
      [],
      ['https://example.com/a.png'],
      [`https://api.example.com${imagePath(1, IMAGE)}`],
      [`https://api.example.com${imagePath(111, IMAGE)}`],
      [`https://api.example.com${path}?v=2`],
    ]) {
      const { result, seen } = read(
        async () => urls,
        () => later(image),
      );
      await expect(result).rejects.toBeInstanceOf(NotFoundError);
      expect(seen.signal?.aborted, JSON.stringify(urls)).toBe(true);
    }
  });

  it('answers 404 when the object is missing, even while the pet read fails', async () => {
    await expect(
      read(
        async () => [path],
        async () => undefined,
      ).result,
    ).rejects.toBeInstanceOf(NotFoundError);
    const failing = read(
      () => later(undefined).then(() => Promise.reject(down())),
      async () => undefined,
    );
    await expect(failing.result).rejects.toBeInstanceOf(NotFoundError);
  });

  it('answers 404 when the pet lists no such image, even while the object read fails', async () => {
    await expect(
      read(
        async () => [],
        () => Promise.reject(down()),
      ).result,
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('fails as the failing read does when the other one would serve the image', async () => {
    await expect(
      read(
        () => Promise.reject(down()),
        async () => image,
      ).result,
    ).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    await expect(
      read(
        async () => [path],
        () => Promise.reject(down()),
      ).result,
    ).rejects.toBeInstanceOf(TemporarilyUnavailableError);
  });
});
