/**
 * The two forms of an ECDSA signature of JWS (RFC 7518 §3.4: `r` and `s` side by side, each the
 * size of the curve's order): `(r, s)` and `(r, n − s)` both verify, so a token signed with ECDSA
 * has two spellings unless the low form (`s ≤ n/2`) is the only one accepted. The local issuer
 * signs in the low form, and the authorizer refuses the high one where a stage says its identity
 * provider does likewise (docs/decisions/one-token-one-bucket.md).
 */

interface Curve {
  /** Bytes of `r`, and of `s`. */
  readonly bytes: number;
  readonly order: bigint;
}

/** The group order `n` of each curve (SEC 2), by JWS algorithm. */
const CURVES: Readonly<Record<string, Curve>> = {
  ES256: { bytes: 32, order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n },
  ES384: {
    bytes: 48,
    order:
      0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
  },
  ES512: {
    bytes: 66,
    order:
      0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
  },
};

/** `s` of a signature of `alg`, or `undefined` when `alg` is not ECDSA or the length is not its own. */
function sOf(alg: unknown, signature: Uint8Array): { curve: Curve; s: bigint } | undefined {
  const curve = typeof alg === 'string' && Object.hasOwn(CURVES, alg) ? CURVES[alg] : undefined;
  if (curve === undefined || signature.length !== 2 * curve.bytes) return undefined;
  return { curve, s: BigInt(`0x${Buffer.from(signature.subarray(curve.bytes)).toString('hex')}`) };
}

/** Whether `signature` is an ECDSA signature of `alg` in its high form (`s > n/2`). */
export function isHighS(alg: unknown, signature: Uint8Array): boolean {
  const read = sOf(alg, signature);
  return read !== undefined && read.s > read.curve.order >> 1n;
}

/** The low form of an ECDSA signature of `alg`: itself when it is one, otherwise `(r, n − s)`. */
export function lowSForm(alg: unknown, signature: Uint8Array): Uint8Array {
  const read = sOf(alg, signature);
  if (read === undefined || read.s <= read.curve.order >> 1n) return signature;
  const { bytes, order } = read.curve;
  const low = Buffer.from((order - read.s).toString(16).padStart(2 * bytes, '0'), 'hex');
  return Buffer.concat([signature.subarray(0, bytes), low]);
}
