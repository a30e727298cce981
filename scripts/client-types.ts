/**
 * TypeScript types of the API, generated from the OpenAPI document by openapi-typescript, as a
 * client of the API makes them (docs/typed-client.md). openapi-typescript needs TypeScript 5's
 * compiler API, which TypeScript 7 (this project's compiler) has not: it lives in the
 * `tools/openapi-client` workspace with a TypeScript 5 of its own.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const workspace = createRequire(new URL('../tools/openapi-client/package.json', import.meta.url));
const cli = join(dirname(workspace.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');

/** Where `npm run generate` writes the types the typed-client test compiles against (git-ignored). */
export const CLIENT_TYPES_FILE = new URL('../test/e2e/client/api.generated.d.ts', import.meta.url);

/**
 * The Swagger Petstore's own v3 document (its pet operations, vendored) and where its types go, for
 * `test/e2e/petstore-client.test.ts`: a client generated from the Petstore's document (git-ignored).
 */
export const PETSTORE_DOCUMENT = new URL('../test/e2e/petstore/openapi.yaml', import.meta.url);
export const PETSTORE_TYPES_FILE = new URL('../test/e2e/petstore/petstore.generated.d.ts', import.meta.url);

/** Runs the openapi-typescript CLI on a document file (JSON or YAML), writing the types to `outFile`. */
export async function generateTypesFromFile(input: string, outFile: string): Promise<void> {
  await promisify(execFile)(process.execPath, [cli, input, '--output', outFile]);
}

/** Runs the openapi-typescript CLI on `documentJson`, writing the types to `outFile`. */
export async function generateClientTypes(documentJson: string, outFile: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'openapi-client-'));
  try {
    const input = join(dir, 'openapi.json');
    await writeFile(input, documentJson);
    await promisify(execFile)(process.execPath, [cli, input, '--output', outFile]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
