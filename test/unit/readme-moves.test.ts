import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README is a first page; the reference it held until issue 44 moved into docs/ and
 * ARCHITECTURE.md. Nothing may be lost on the way: every heading the README had (b0a96ae) is a
 * heading of one of them, and every relative link of the README and of docs/ leads to a file.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));

/** `git show b0a96ae:README.md | grep -E '^#{1,3} '`, the README before it became a first page. */
const HEADINGS_OF_THE_OLD_README = [
  'Wallet & Catalog API',
  'Set-up: two commands',
  'Try it (with `npm start` running)',
  'The reference page',
  'A typed client',
  'The contract and the HTTP edges',
  'Contracts and the decisions taken where the API description is silent',
  'Catalog',
  'Wallet and money',
  'Idempotency contract (`Idempotency-Key`, IETF draft semantics)',
  'Tables (`shared/dynamodb/tables.ts`, read by CDK and by the DynamoDB Local set-up)',
  'Authentication and authorization',
  'Layout',
  'The local gateway (`npm start`)',
  'Running what ships: `npm run invoke`, and the three ways to run locally',
  'Tests',
  'Deploying with AWS CDK',
  'Deploy pipeline (from zero to prod)',
  'Operations',
  'Runbook',
  'Restoring the ledger',
];

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const documents = [
  join(root, 'README.md'),
  join(root, 'ARCHITECTURE.md'),
  ...markdownFiles(join(root, 'docs')),
];

/** The headings of a Markdown file, outside its code blocks. */
function headingsOf(path: string): string[] {
  let inCode = false;
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (line.startsWith('```')) inCode = !inCode;
      const heading = inCode ? null : /^#{1,6} (.+?)\s*$/.exec(line);
      return heading ? [heading[1] as string] : [];
    });
}

describe('the README as a first page', () => {
  it('keeps every heading it had somewhere a link away: README.md, ARCHITECTURE.md or docs/', () => {
    const where = new Map<string, string>();
    for (const path of documents)
      for (const heading of headingsOf(path)) where.set(heading, relative(root, path));
    const lost = HEADINGS_OF_THE_OLD_README.filter((heading) => !where.has(heading));
    expect(lost).toEqual([]);
  });

  it('is a first page: at most about 200 lines, none of them a wall of text', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
    expect(lines.length).toBeLessThanOrEqual(200);
    // Table rows and links are allowed their length; prose wraps.
    const long = lines.filter((line) => line.length > 110 && !line.startsWith('|'));
    expect(long).toEqual([]);
  });

  it('links only to files that exist, from the README and from docs/', () => {
    const broken: string[] = [];
    for (const path of documents) {
      const text = readFileSync(path, 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (target === undefined || /^(https?:|mailto:|#)/.test(target)) continue;
        const file = (target.split('#')[0] as string).replace(/\/$/, '');
        try {
          readFileSync(join(path, '..', file));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EISDIR')
            broken.push(`${relative(root, path)} → ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
