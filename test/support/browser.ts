/**
 * Headless Chromium or Chrome for the browser tests, driven by playwright-core, which downloads no
 * browser of its own: the test uses the one the machine has. No browser is a failure, never a
 * skip: a test that cannot run must not pass, in CI or on a developer's machine.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where the browser is: a binary, or Chrome where playwright-core knows it is installed. */
export type BrowserLocation =
  | { readonly executablePath: string; readonly found: string }
  | { readonly channel: 'chrome'; readonly found: string };

/** The names Chromium and Chrome go by on PATH, in the order they are preferred. */
export const BROWSER_NAMES = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
] as const;

export const HOW_TO_INSTALL = [
  'Install one, e.g.:',
  '  Debian:        sudo apt-get install chromium',
  '  Ubuntu:        sudo snap install chromium',
  '  Fedora:        sudo dnf install chromium',
  '  macOS/Windows: Google Chrome from https://www.google.com/chrome/',
  `or set CHROMIUM_PATH to a Chromium or Chrome binary. Looked for: CHROMIUM_PATH, then ${BROWSER_NAMES.join(', ')} on PATH, then Chrome's standard install on macOS and Windows.`,
].join('\n');

/** Thrown when no browser is found or one does not start: says what to install. */
export class NoBrowserError extends Error {
  override name = 'NoBrowserError';
}

/** `name` as an executable file in one of PATH's directories (with `.exe` on Windows). */
function onPath(name: string, path: string, platform: NodeJS.Platform): string | undefined {
  const names = platform === 'win32' ? [`${name}.exe`, name] : [name];
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue;
    for (const candidate of names.map((file) => join(directory, file))) {
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The browser the tests use: `CHROMIUM_PATH`, else the first of `BROWSER_NAMES` on PATH, else, on
 * macOS and Windows (where Chrome is not on PATH), playwright-core's `chrome` channel, which finds
 * Chrome where its installer puts it. `undefined`: none (the channel is only known on launch).
 * A `CHROMIUM_PATH` that names no executable is an error rather than ignored: the developer meant it.
 */
export function findBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): BrowserLocation | undefined {
  const configured = env.CHROMIUM_PATH;
  if (configured !== undefined && configured !== '') {
    if (!isExecutableFile(configured)) {
      throw new NoBrowserError(`CHROMIUM_PATH=${configured} is not an executable file.\n${HOW_TO_INSTALL}`);
    }
    return { executablePath: configured, found: `CHROMIUM_PATH=${configured}` };
  }
  for (const name of BROWSER_NAMES) {
    const executablePath = onPath(name, env.PATH ?? '', platform);
    if (executablePath !== undefined) return { executablePath, found: executablePath };
  }
  if (platform === 'darwin' || platform === 'win32')
    return { channel: 'chrome', found: 'the Chrome channel' };
  return undefined;
}

/** `findBrowser`, or a `NoBrowserError` saying what to install. */
export function requireBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
): BrowserLocation {
  const location = findBrowser(env, platform);
  if (location === undefined) {
    throw new NoBrowserError(`No Chromium or Chrome found: the browser tests cannot run.\n${HOW_TO_INSTALL}`);
  }
  return location;
}

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

/** Starts the browser `requireBrowser` finds, headless, with a fresh profile (`--user-data-dir` in a temporary directory). */
export async function launchChromium(location = requireBrowser()): Promise<Browser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'wallet-catalog-chromium-'));
  let context: BrowserContext;
  try {
    // A persistent context is how playwright takes `--user-data-dir`.
    const { found: _found, ...where } = location;
    context = await chromium.launchPersistentContext(userDataDir, {
      ...where,
      headless: true,
      args: FLAGS,
      timeout: 30_000,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new NoBrowserError(
      `The browser (${location.found}) did not start: ${(error as Error).message}\n${HOW_TO_INSTALL}`,
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
