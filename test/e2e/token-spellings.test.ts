import { describe, expect, it } from 'vitest';
import { defaultCallerRateLimit } from '#infra/environment.ts';
import { gateway, tokenFor, uniquePetId } from './http.ts';

/**
 * One token, one bucket, whatever its bytes (issue 45 item 2): after a token's limit, its ECDSA
 * twin `(r, n − s)` and the 15 spellings of its signature that differ in the 4 bits base64url
 * leaves unused each got 200 again, ≈ 32 buckets for one token. Each is now refused with 401
 * before its signature is checked, or counted in the token's own bucket (429)
 * (docs/decisions/one-token-one-bucket.md).
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The order of P-256 (SEC 2 §2.4.2), which the local issuer signs with (ES256). */
const P256_ORDER = BigInt('0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551');

function respelt(token: string): string[] {
  const cut = token.lastIndexOf('.') + 1;
  const signature = token.slice(cut);
  const bytes = Buffer.from(signature, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  const twin = Buffer.concat([
    bytes.subarray(0, 32),
    Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex'),
  ]).toString('base64url');
  // 64 bytes are 86 characters: the last carries 2 bits of the signature and 4 unused ones.
  const last = ALPHABET.indexOf(signature.at(-1) as string);
  const unusedBits = Array.from(
    { length: 15 },
    (_, i) => `${signature.slice(0, -1)}${ALPHABET[last | (i + 1)]}`,
  );
  return [twin, ...unusedBits].map((spelling) => `${token.slice(0, cut)}${spelling}`);
}

async function get(path: string, token: string): Promise<number> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.arrayBuffer();
  return response.status;
}

describe('one token spelt in other bytes', () => {
  it('after the limit, its high-S twin and its 15 unused-bit spellings are each 401 or 429, never served', async () => {
    const { limit } = defaultCallerRateLimit;
    const token = await tokenFor('read:pets');
    const pet = () => `/api/v3/pet/${uniquePetId()}`;
    // Served by the function: an unknown pet. The token is good.
    expect(await get(pet(), token)).toBe(404);
    // WAF counts every request with the header, routed or not: the rest of the limit on a path no
    // route serves, which costs no function (in bundled mode, 25 at once would be 25 cold starts).
    const statuses: number[] = [];
    for (let sent = 1; sent < limit; sent += 25) {
      const batch = Array.from({ length: Math.min(25, limit - sent) }, () =>
        get('/api/rate-limit-probe', token),
      );
      statuses.push(...(await Promise.all(batch)));
    }
    expect(statuses).toEqual(Array(limit - 1).fill(404));

    const spellings = respelt(token);
    expect(new Set(spellings).size).toBe(16);
    for (const spelling of spellings) {
      expect(spelling).not.toBe(token);
      // Before: 404, served by the function, each spelling a bucket of its own.
      expect([401, 429]).toContain(await get(pet(), spelling));
    }
    expect(await get(pet(), token)).toBe(429);
  });
});
