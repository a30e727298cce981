/**
 * Builds every target twice, both times through `esbuildOptions` of `infra/bundling.ts` (the
 * options CDK bundles with): once as deployed, once instrumented for the in-process benchmark.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';
import { esbuildOptions } from '#infra/bundling.ts';
import { SMITHY_CLIENTS } from './stub.ts';
import type { Target } from './targets.ts';

/** The module defining the SDK's `Client` (the base of DynamoDBClient and DynamoDBDocumentClient). */
const SMITHY_CLIENT_MODULE =
  /[\\/]@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]client[\\/]smithy-client[\\/]client\.js$/;

export interface Bundle {
  readonly target: Target;
  /** The bundle exactly as CDK would deploy it. */
  readonly file: string;
  /** The same bundle plus one statement exposing the SDK's `Client` class (see {@link exposeSmithyClient}). */
  readonly instrumentedFile: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  /** For a function serving static files: what it serves (see `StaticAssets` in ./targets.ts). */
  readonly served?: ServedAssets;
}

/** The files a static-asset function serves, measured from the module it serves them from. */
export interface ServedAssets {
  /** The sum of each file's gzip size, as stored in the module (gzip -9). */
  readonly gzipBytes: number;
  /** The largest answer's body as it crosses the Lambda response limit: the text, JSON-escaped. */
  readonly largestResponseBytes: number;
}

async function measureServedAssets(module: string): Promise<ServedAssets> {
  const { assets } = (await import(pathToFileURL(module).href)) as {
    assets: ReadonlyMap<string, { readonly gzipBase64: string }>;
  };
  let gzipBytes = 0;
  let largestResponseBytes = 0;
  for (const { gzipBase64 } of assets.values()) {
    const gzip = Buffer.from(gzipBase64, 'base64');
    gzipBytes += gzip.length;
    const body = JSON.stringify(gunzipSync(gzip).toString('utf8'));
    largestResponseBytes = Math.max(largestResponseBytes, Buffer.byteLength(body));
  }
  return { gzipBytes, largestResponseBytes };
}

/**
 * An esbuild plugin appending to the SDK's `client.js` a statement that registers its `Client`
 * class on a global symbol, so that the in-process benchmark can replace `Client.prototype.send`.
 *
 * Why this rather than patching `@smithy/core` from `node_modules`: the bundles carry their own copy
 * of the SDK, which nothing outside the bundle can reach; and why not an alias to a stub SDK: the
 * measured code must be the production code, SDK command construction and marshalling included.
 * The only difference is the one appended statement, which runs at init, never per request.
 */
function exposeSmithyClient(): Plugin {
  return {
    name: 'bench-expose-smithy-client',
    setup(esbuild) {
      esbuild.onLoad({ filter: SMITHY_CLIENT_MODULE }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        return {
          contents: `${source}\n(globalThis[Symbol.for(${JSON.stringify(SMITHY_CLIENTS)})] ??= []).push(Client);\n`,
          loader: 'js',
        };
      });
    },
  };
}

/** Builds the deployed and the instrumented bundle of every target under `outDir`. */
export async function buildBundles(targets: readonly Target[], outDir: string): Promise<Bundle[]> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  return Promise.all(
    targets.map(async (target): Promise<Bundle> => {
      const file = join(outDir, 'deployed', target.name, 'index.mjs');
      const instrumentedFile = join(outDir, 'instrumented', target.name, 'index.mjs');
      await build({ ...esbuildOptions(target.entry, file), logLevel: 'error' });
      const options = esbuildOptions(target.entry, instrumentedFile);
      await build({
        ...options,
        plugins: [...(options.plugins ?? []), exposeSmithyClient()],
        logLevel: 'error',
      });
      const code = await readFile(file);
      return {
        target,
        file,
        instrumentedFile,
        rawBytes: code.length,
        gzipBytes: gzipSync(code).length,
        ...(target.staticAssets ? { served: await measureServedAssets(target.staticAssets.module) } : {}),
      };
    }),
  );
}
