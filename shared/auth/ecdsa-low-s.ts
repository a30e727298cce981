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
  /** `n/2` (rounded down) in `bytes` big-endian bytes: `s` is high when it compares greater. */
  readonly half: Buffer;
}

const curve = (bytes: number, order: bigint): Curve => ({
  bytes,
  order,
  half: Buffer.from((order >> 1n).toString(16).padStart(2 * bytes, '0'), 'hex'),
});

/** The group order `n` of each curve (SEC 2), by JWS algorithm. */
const CURVES: Readonly<Record<string, Curve>> = {
  ES256: curve(32, 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n),
  ES384: curve(
    48,
    0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
  ),
  ES512: curve(
    66,
    0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
  ),
};

/** The curve of a signature of `alg`, or `undefined` when `alg` is not ECDSA or the length is not its own. */
function curveOf(alg: unknown, signature: Uint8Array): Curve | undefined {
  const found = typeof alg === 'string' && Object.hasOwn(CURVES, alg) ? CURVES[alg] : undefined;
  return found !== undefined && signature.length === 2 * found.bytes ? found : undefined;
}

/**
 * Whether `signature` is an ECDSA signature of `alg` in its high form (`s > n/2`): a byte
 * comparison, as both are big-endian of one length, cheaper than a BigInt per token.
 */
export function isHighS(alg: unknown, signature: Uint8Array): boolean {
  const found = curveOf(alg, signature);
  return found !== undefined && Buffer.compare(signature.subarray(found.bytes), found.half) > 0;
}

/** The low form of an ECDSA signature of `alg`: itself when it is one, otherwise `(r, n − s)`. */
export function lowSForm(alg: unknown, signature: Uint8Array): Uint8Array {
  if (!isHighS(alg, signature)) return signature;
  const { bytes, order } = curveOf(alg, signature) as Curve;
  const s = BigInt(`0x${Buffer.from(signature.subarray(bytes)).toString('hex')}`);
  const low = Buffer.from((order - s).toString(16).padStart(2 * bytes, '0'), 'hex');
  return Buffer.concat([signature.subarray(0, bytes), low]);
}
