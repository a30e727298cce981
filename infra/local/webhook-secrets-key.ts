/**
 * The local stack's key for the webhook signing secrets, in place of the KMS key a deployment has
 * (shared/webhooks/secrets/keeper.ts): 32 random bytes, created on first use under
 * `<stateDir>/webhooks/secrets.key` (readable by the owner only) and reused afterwards, so that
 * endpoints registered before a restart still sign. Racing creators agree: the first link wins.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DESTINATION_MODE_ENV } from '#shared/webhooks/model/destination-mode.ts';
import { STATIC_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';

export async function loadOrCreateWebhookSecretsKey(stateDir: string): Promise<string> {
  const dir = join(stateDir, 'webhooks');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'secrets.key');
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing !== undefined && existing.trim() !== '') return existing.trim();
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  // link() fails if another process created the key first; then theirs is the key.
  await link(candidate, path).catch(() => undefined);
  await rm(candidate, { force: true });
  return (await readFile(path, 'utf8')).trim();
}

/** What the functions on the webhooks table get locally: the key, and http to loopback allowed. */
export async function localWebhookEnvironment(stateDir: string): Promise<Record<string, string>> {
  return { [STATIC_KEY_ENV]: await loadOrCreateWebhookSecretsKey(stateDir), [DESTINATION_MODE_ENV]: 'local' };
}
