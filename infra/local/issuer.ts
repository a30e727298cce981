/**
 * The local identity provider: one signing key kept under the local state directory, its public
 * JWKS (served at {@link JWKS_PATH} by `jwks-server.ts`) and access tokens signed with it, so that
 * local runs and tests go through the same authorizer as AWS, with real signatures.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JSONWebKeySet, type JWK, SignJWT } from 'jose';
import { defaultTokenRules } from '#infra/environment.ts';
import { lowSForm } from '#shared/auth/ecdsa-low-s.ts';
import { optionalEnv } from '#shared/config.ts';
import { localStateDir } from './state.ts';

/** The `aud` of local tokens, and so the AUTH_AUDIENCE of the local authorizer. */
export const LOCAL_AUDIENCE = 'wallet-catalog-api';

/** Where the issuer's public keys are served (`jwks-server.ts`). */
export const JWKS_PATH = '/.well-known/jwks.json';

/** RFC 9068 asks for the client the token was issued to; locally there is only this one. */
export const LOCAL_CLIENT_ID = 'local-token-cli';

const DEFAULT_PORT = 3000;
const ALG = 'ES256';
const PRIVATE_KEY_FILE = 'private-key.jwk.json';
const JWKS_FILE = 'jwks.json';

/**
 * The longest lifetime of a local token: the local authorizer's maximum, beyond which it would
 * refuse the token anyway (`auth:maxTokenLifetimeSeconds` sets a deployed stage's).
 */
export const MAX_LOCAL_TTL_SECONDS: number = defaultTokenRules.maxTokenLifetimeSeconds;

/** Why a lifetime is refused, for the library and the `npm run token` command alike. */
export function tooLongMessage(ttlSeconds: number): string {
  return `a lifetime of ${ttlSeconds} s is longer than the authorizer accepts (at most ${MAX_LOCAL_TTL_SECONDS} s, exp - iat); it would refuse the token`;
}

/** The issuer (`iss`) of local tokens: the base URL of the local gateway on `port`. */
export function localIssuerUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** The local gateway's port: `PORT` when set, otherwise 3000. Throws when `PORT` is no TCP port. */
export function defaultPort(): number {
  return givenPort() ?? DEFAULT_PORT;
}

/** `PORT` when set, else `undefined` (local commands then look for the running stack). Throws when `PORT` is no TCP port. */
export function givenPort(): number | undefined {
  const raw = optionalEnv('PORT');
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65_535) {
    throw new Error(`PORT must be a TCP port between 1 and 65535, got "${raw}"`);
  }
  return port;
}

/** The issuer's signing key and what a verifier needs of it. */
export interface LocalKeys {
  /** The public key as a JWK Set, with `kid`, `alg` and `use`: what the gateway serves. */
  readonly publicJwks: JSONWebKeySet;
  readonly privateKey: KeyObject;
  readonly kid: string;
  readonly alg: typeof ALG;
}

/**
 * The local issuer's key pair, created on first use under `<stateDir>/issuer/` (the private JWK
 * readable by the owner only, the public JWKS beside it) and reused afterwards. Processes racing
 * to create it (`npm start` and `npm run token` side by side) all end up with the same key.
 */
export async function loadOrCreateLocalKeys(stateDir: string = localStateDir()): Promise<LocalKeys> {
  const dir = join(stateDir, 'issuer');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const privatePath = join(dir, PRIVATE_KEY_FILE);
  const privateJwk = (await readPrivateJwk(privatePath)) ?? (await createPrivateJwk(privatePath));
  const publicJwks = publicJwksOf(privateJwk);
  // Derived from the private key, so racing writers write the same bytes; rename keeps readers from a torn file.
  await writeAtomically(join(dir, JWKS_FILE), `${JSON.stringify(publicJwks, null, 2)}\n`, 0o644);
  return {
    publicJwks,
    privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }),
    kid: privateJwk.kid,
    alg: ALG,
  };
}

export interface LocalTokenOptions {
  readonly sub: string;
  /** Space-separated, or one scope per entry; none when empty or absent. */
  readonly scope?: string | readonly string[];
  /**
   * Lifetime from now, at most the authorizer's maximum ({@link MAX_LOCAL_TTL_SECONDS}); negative
   * for a token that has already expired.
   */
  readonly ttlSeconds?: number;
  /** The local gateway's port, which makes the issuer; {@link defaultPort} when absent. */
  readonly port?: number;
  readonly audience?: string;
  /** Where the issuer's keys live; {@link localStateDir} when absent. */
  readonly stateDir?: string;
}

/**
 * A JWT access token (RFC 9068: `typ: at+jwt`, `iss`, `aud`, `sub`, `client_id`, `iat`, `exp`,
 * a unique `jti`, and `scope`) signed by the local issuer, as the local authorizer expects it.
 */
export async function signLocalToken(options: LocalTokenOptions): Promise<string> {
  const { sub, ttlSeconds = 3600, port = defaultPort(), audience = LOCAL_AUDIENCE } = options;
  if (sub === '') throw new Error('sub must not be empty');
  if (!Number.isSafeInteger(ttlSeconds)) throw new Error(`ttlSeconds must be an integer, got ${ttlSeconds}`);
  if (ttlSeconds > MAX_LOCAL_TTL_SECONDS) throw new Error(tooLongMessage(ttlSeconds));
  const scope = typeof options.scope === 'string' ? options.scope.trim() : (options.scope ?? []).join(' ');
  const { privateKey, kid, alg } = await loadOrCreateLocalKeys(options.stateDir);
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ client_id: LOCAL_CLIENT_ID, ...(scope === '' ? {} : { scope }) })
    .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
    .setIssuer(localIssuerUrl(port))
    .setAudience(audience)
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .setJti(randomUUID())
    .sign(privateKey);
  // In the low-S form only, as the local authorizer demands (AUTH_REQUIRE_LOW_S): one spelling per token.
  const cut = token.lastIndexOf('.') + 1;
  const signature = lowSForm(alg, Buffer.from(token.slice(cut), 'base64url'));
  return `${token.slice(0, cut)}${Buffer.from(signature).toString('base64url')}`;
}

type PrivateJwk = JWK & { kid: string; d: string };

async function readPrivateJwk(path: string): Promise<PrivateJwk | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const jwk = JSON.parse(text) as Partial<PrivateJwk>;
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string' || typeof jwk.kid !== 'string') {
    throw new Error(`${path} is not the local issuer's P-256 private key; delete it to have a new one made`);
  }
  return jwk as PrivateJwk;
}

/**
 * Writes a new key with `link`, which fails when the file exists, instead of `rename`, which
 * replaces it: a process that lost the race must sign with the winner's key, not its own.
 */
async function createPrivateJwk(path: string): Promise<PrivateJwk> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(jwk);
  const privateJwk: PrivateJwk = { ...jwk, d: String(jwk.d), kid, alg: ALG, use: 'sig' };
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify(privateJwk), { mode: 0o600, flag: 'wx' });
  try {
    await link(temp, path);
    return privateJwk;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readPrivateJwk(path);
    if (!winner) throw error;
    return winner;
  } finally {
    await unlink(temp);
  }
}

function publicJwksOf(privateJwk: PrivateJwk): JSONWebKeySet {
  const { kty, crv, x, y, kid } = privateJwk;
  return { keys: [{ kty, crv, x, y, kid, alg: ALG, use: 'sig' }] };
}

async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, content, { mode });
  await rename(temp, path);
}
