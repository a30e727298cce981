import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { optionalEnv } from '#shared/config.ts';

/** `<repo root>/.local`: git-ignored, so local keys and data never reach a commit. */
const DEFAULT_STATE_DIR = fileURLToPath(new URL('../../.local', import.meta.url));

/**
 * The directory of local-run state (issuer keys, data): `LOCAL_STATE_DIR` when set, otherwise
 * `<repo root>/.local`. Created on first use, readable by the owner only since it holds a private key.
 */
export function localStateDir(): string {
  const dir = optionalEnv('LOCAL_STATE_DIR') ?? DEFAULT_STATE_DIR;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
