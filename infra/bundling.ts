import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BundlingOptions, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/** The repository root: esbuild's working directory and the NodejsFunction project root. */
export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The lock file NodejsFunction hashes and would install from; named so it never searches upwards. */
export const LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');

/** The repository tsconfig, so esbuild sees the same compiler options as `tsc -p .`. */
export const TSCONFIG = join(PROJECT_ROOT, 'tsconfig.json');

/**
 * Lets CommonJS dependencies call `require` inside an ESM bundle. The import is aliased so it cannot
 * collide with a bundled module's own top-level `createRequire`.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);";

/**
 * What the bundles get for `node:http`. An ESM import of it, as the SDK's HTTP handler and
 * `@middy/util` make, builds the module's ESM facade, which reads its lazy `WebSocket`,
 * `CloseEvent` and `MessageEvent` getters and so loads undici (nodejs/node#57649): a quarter to a
 * third of a DynamoDB function's cold start, most of one without the SDK. The shim hands over the
 * same built-in module without a facade, and undici loads only if something uses it. The path is
 * relative to the project root, the working directory of both CDK's local esbuild and
 * {@link esbuildOptions}, where esbuild resolves aliases.
 */
const NODE_HTTP_SHIM = './infra/shims/node-http.cjs';
const NODE_HTTP_ALIAS = { 'node:http': NODE_HTTP_SHIM, http: NODE_HTTP_SHIM } as const;

/**
 * The settings both forms below are made of, so the CDK bundle and a direct esbuild build cannot
 * drift apart.
 */
const settings = {
  target: 'node24',
  minify: true,
  // A map beside the bundle, linked by a sourceMappingURL comment: with NODE_OPTIONS
  // --enable-source-maps (set by ProjectFunction) stack traces in the logs name the TypeScript
  // file and line. Without sources: they are in the repository. Cost in
  // docs/decisions/local-lambda-runner.md.
  sourcemap: 'linked',
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // keepNames would wrap every named function the SDK creates per call in a defineProperty call
  // (its cost: docs/decisions/local-lambda-runner.md). Error names that reach logs are set explicitly.
  keepNames: false,
} as const;

/**
 * Bundling of every function, as NodejsFunction takes it: local esbuild (never Docker), ESM output
 * (`index.mjs`), and the AWS SDK bundled too so that functions run the versions pinned in
 * package-lock.json rather than whatever the runtime ships.
 */
export const bundlingOptions: BundlingOptions = {
  format: OutputFormat.ESM,
  target: settings.target,
  minify: settings.minify,
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: settings.sourcesContent,
  mainFields: [...settings.mainFields],
  keepNames: settings.keepNames,
  banner: ESM_REQUIRE_BANNER,
  esbuildArgs: { '--alias': Object.entries(NODE_HTTP_ALIAS).map(([from, to]) => `${from}=${to}`) },
  externalModules: [],
  tsconfig: TSCONFIG,
  forceDockerBundling: false,
};

/**
 * The same bundling as plain esbuild options, for building a function without CDK (e.g. a
 * benchmark): byte-identical to the bundle NodejsFunction produces for the same entry.
 *
 * @param entry absolute path of a handler module
 * @param outfile where to write the bundle; CDK names it `index.mjs`
 */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    absWorkingDir: PROJECT_ROOT,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: settings.target,
    minify: settings.minify,
    sourcemap: settings.sourcemap,
    sourcesContent: settings.sourcesContent,
    mainFields: [...settings.mainFields],
    keepNames: settings.keepNames,
    banner: { js: ESM_REQUIRE_BANNER },
    alias: { ...NODE_HTTP_ALIAS },
    external: [],
    tsconfig: TSCONFIG,
  };
}
