import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEnvelopeSealer, type KeyWrapper } from '#shared/webhooks/secrets/envelope.ts';
import { secretSealerFromEnv } from '#shared/webhooks/secrets/keeper.ts';
import { newSigningSecret } from '#shared/webhooks/secrets/signing-secret.ts';
import { createStaticKeyWrapper } from '#shared/webhooks/secrets/static-key-wrapper.ts';

const KEY = randomBytes(32).toString('base64');
const context = { address: 'alice', endpointId: 'whep_AAAAAAAAAAAAAAAAAAAAAA' };

/** A wrapper that counts how often the keeper is asked to open a data key. */
function counting(wrapper: KeyWrapper) {
  let unwraps = 0;
  return {
    wrapper: {
      ...wrapper,
      unwrap: (w: Uint8Array, c: typeof context) => {
        unwraps++;
        return wrapper.unwrap(w, c);
      },
    },
    unwraps: () => unwraps,
  };
}

describe('a signing secret', () => {
  it('is 32 random bytes in the whsec_ form Standard Webhooks libraries read', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSigningSecret));
    expect(secrets.size).toBe(100);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
  });
});

describe('sealed secrets', () => {
  it('open to the secret sealed, and hold neither it nor its bytes', async () => {
    const sealer = createEnvelopeSealer(createStaticKeyWrapper(KEY));
    const secret = newSigningSecret();
    const sealed = await sealer.seal(secret, context);
    const stored = JSON.stringify(sealed);
    expect(stored).not.toContain(secret.slice(6));
    expect(stored).not.toContain(Buffer.from(secret).toString('base64'));
    expect(sealed.keeper).toMatch(/^static:/);
    expect(stored).not.toContain(KEY);
    expect(await sealer.open(sealed, context)).toBe(secret);
  });

  it("do not open as another endpoint's or another wallet's", async () => {
    const sealer = createEnvelopeSealer(createStaticKeyWrapper(KEY));
    const sealed = await sealer.seal(newSigningSecret(), context);
    await expect(
      sealer.open(sealed, { ...context, endpointId: 'whep_BBBBBBBBBBBBBBBBBBBBBB' }),
    ).rejects.toThrow();
    await expect(sealer.open(sealed, { ...context, address: 'mallory' })).rejects.toThrow();
  });

  it('do not open once a byte of the ciphertext changed, nor under another key', async () => {
    const sealed = await createEnvelopeSealer(createStaticKeyWrapper(KEY)).seal(newSigningSecret(), context);
    const bytes = Buffer.from(sealed.ciphertext, 'base64');
    bytes[14] = (bytes[14] as number) ^ 1;
    const fresh = createEnvelopeSealer(createStaticKeyWrapper(KEY));
    await expect(fresh.open({ ...sealed, ciphertext: bytes.toString('base64') }, context)).rejects.toThrow();
    const otherKey = createEnvelopeSealer(createStaticKeyWrapper(randomBytes(32).toString('base64')));
    await expect(otherKey.open(sealed, context)).rejects.toThrow();
  });

  it('get a data key each, and a warm sealer asks the keeper once per data key', async () => {
    const { wrapper, unwraps } = counting(createStaticKeyWrapper(KEY));
    const sealer = createEnvelopeSealer(wrapper);
    const [a, b] = [await sealer.seal('whsec_a', context), await sealer.seal('whsec_b', context)];
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    for (let i = 0; i < 3; i++) {
      expect(await sealer.open(a, context)).toBe('whsec_a');
      expect(await sealer.open(b, context)).toBe('whsec_b');
    }
    expect(unwraps()).toBe(2);
  });
});

describe('the keeper a function gets', () => {
  it('is the key of WEBHOOK_SECRETS_KEY without a KMS key id, and must be 32 bytes', async () => {
    const sealer = secretSealerFromEnv({ WEBHOOK_SECRETS_KEY: KEY });
    expect((await sealer.seal('whsec_x', context)).keeper).toMatch(/^static:/);
    expect(() => secretSealerFromEnv({ WEBHOOK_SECRETS_KEY: randomBytes(16).toString('base64') })).toThrow(
      /32 bytes/,
    );
    expect(() => secretSealerFromEnv({})).toThrow(/WEBHOOK_SECRETS_KEY/);
  });
});
