/**
 * Headless Chromium for the browser tests: the system's `chromium` (Debian package), driven by
 * playwright-core, which downloads no browser of its own. No browser is a failure, never a skip:
 * a test that cannot run must not pass, in CI or on a developer's machine.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where the browser is; `CHROMIUM_PATH` overrides it. */
export const chromiumPath = (): string => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const HOW_TO_INSTALL =
  'Install it with `apt-get update && apt-get install -y chromium` (Debian; `.ci/run` does this in CI), or set CHROMIUM_PATH to a Chromium or Chrome binary.';

/**
 * Everything that could reach the network on its own is off: CI and this machine have no internet,
 * and a test must not depend on it. The profile is new for every launch.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Starts headless Chromium with a fresh profile (`--user-data-dir` in a temporary directory). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: the browser tests cannot run. ${HOW_TO_INSTALL}`);
  }
  const userDataDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-chromium-'));
  let context: BrowserContext;
  try {
    // A persistent context is how playwright takes `--user-data-dir`.
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: FLAGS,
      timeout: 30_000,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error(
      `Chromium at ${executablePath} did not start: ${(error as Error).message}\n${HOW_TO_INSTALL}`,
    );
  }
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
