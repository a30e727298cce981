import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBrowser, launchChromium, NoBrowserError, requireBrowser } from '../support/browser.ts';

/** Where the browser tests look for a browser, on machines this one is not: PATH is made up here. */

let root: string;
const dirs: Record<'first' | 'second' | 'empty', string> = { first: '', second: '', empty: '' };

/** Puts an executable (or, `executable: false`, a plain file) named `name` in `dir`. */
async function place(dir: string, name: string, executable = true): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, '#!/bin/sh\n');
  await chmod(path, executable ? 0o755 : 0o644);
  return path;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'browser-finder-'));
  for (const name of Object.keys(dirs) as Array<keyof typeof dirs>) {
    dirs[name] = await mkdtemp(join(root, `${name}-`));
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const pathOf = (...entries: string[]) => entries.join(delimiter);

describe('the browser the browser tests use', () => {
  it('is CHROMIUM_PATH when set, before anything on PATH', async () => {
    const onPath = await place(dirs.first, 'chromium');
    const configured = await place(dirs.second, 'my-chrome');
    expect(findBrowser({ CHROMIUM_PATH: configured, PATH: dirs.first }, 'linux')).toMatchObject({
      executablePath: configured,
    });
    expect(findBrowser({ PATH: dirs.first }, 'linux')).toMatchObject({ executablePath: onPath });
  });

  it.each(['chromium-browser', 'google-chrome', 'google-chrome-stable'])(
    'is %s on PATH, as Ubuntu and Chrome install it',
    async (name) => {
      const dir = await mkdtemp(join(root, 'one-'));
      const path = await place(dir, name);
      expect(findBrowser({ PATH: pathOf(dirs.empty, dir) }, 'linux')).toMatchObject({ executablePath: path });
    },
  );

  it('prefers Chromium to Chrome, wherever on PATH each is', async () => {
    const dir = await mkdtemp(join(root, 'both-'));
    const later = await mkdtemp(join(root, 'later-'));
    await place(dir, 'google-chrome');
    const chromium = await place(later, 'chromium-browser');
    expect(findBrowser({ PATH: pathOf(dir, later) }, 'linux')).toMatchObject({ executablePath: chromium });
  });

  it('skips a file of the name that is not executable', async () => {
    const dir = await mkdtemp(join(root, 'plain-'));
    await place(dir, 'chromium', false);
    expect(findBrowser({ PATH: dir }, 'linux')).toBeUndefined();
  });

  it.each(['darwin', 'win32'] as const)(
    'is Chrome by its playwright channel on %s, where it is not on PATH',
    (platform) => {
      expect(findBrowser({ PATH: dirs.empty }, platform)).toMatchObject({ channel: 'chrome' });
    },
  );

  it('is none on Linux without one, and the error says what to install and where it looked', async () => {
    expect(findBrowser({ PATH: dirs.empty }, 'linux')).toBeUndefined();
    expect(() => requireBrowser({ PATH: dirs.empty }, 'linux')).toThrow(NoBrowserError);
    expect(() => requireBrowser({ PATH: dirs.empty }, 'linux')).toThrow(
      /No Chromium or Chrome found[\s\S]*sudo apt-get install chromium[\s\S]*CHROMIUM_PATH[\s\S]*google-chrome-stable/,
    );
  });

  it('refuses a CHROMIUM_PATH that names no executable, rather than look elsewhere', async () => {
    await place(dirs.first, 'chromium');
    const missing = join(root, 'no-such-browser');
    expect(() => findBrowser({ CHROMIUM_PATH: missing, PATH: dirs.first }, 'linux')).toThrow(
      new RegExp(`CHROMIUM_PATH=${missing} is not an executable file[\\s\\S]*sudo apt-get install chromium`),
    );
  });

  it('that does not start fails the launch with what to install', async () => {
    const notABrowser = await place(dirs.second, 'not-a-browser');
    await expect(launchChromium({ executablePath: notABrowser, found: notABrowser })).rejects.toThrow(
      /did not start[\s\S]*sudo apt-get install chromium/,
    );
  });
});
