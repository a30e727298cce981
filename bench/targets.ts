/**
 * What the benchmark measures: the Lambda functions of the route table plus the authorizer, the
 * baseline they are compared with, and a hello-world reference, each with the environment its
 * module reads at init on Lambda.
 */
import { fileURLToPath } from 'node:url';
import { authorizerEnvironment, defaultServiceSettings, functionEnvironment } from '#infra/environment.ts';
import { LOCAL_AUDIENCE } from '#infra/local/issuer.ts';
import type { JwksServer } from '#infra/local/jwks-server.ts';
import { type Route, routes, type TableName } from '#shared/routes.ts';
import type { BucketName } from '#shared/s3/buckets.ts';
import { KMS_KEY_ENV } from '#shared/webhooks/secrets/keeper.ts';

/**
 * `client-baseline`: the baseline plus the SDK client of a function's second grant, which that
 * function's bundle and cold init are compared with ({@link bundleBaselineOf}).
 */
export type TargetKind = 'function' | 'baseline' | 'client-baseline' | 'reference';

/**
 * A function whose bundle IS the static files it serves (docs/decisions/api-docs-page.md): its
 * size is its payload's, so a ratio to the bare-SDK baseline says nothing about its code. It is
 * held instead to a budget of its own (bench/report.ts, stated in BENCHMARKS.md): the bundle,
 * gzipped, at most 10 % over the gzip of the files it serves, and its largest answer within
 * Lambda's 6 MB response limit. Cold init, warm overhead and round trips are judged as for any
 * function.
 */
export interface StaticAssets {
  /** Why the baseline ratio does not apply, as the report prints it. */
  readonly reason: string;
  /** The generated module the function serves its files from (`npm run generate`). */
  readonly module: string;
}

export interface Target {
  /** The function folder (`functions/<name>`), or `baseline` / `hello`. */
  readonly name: string;
  readonly kind: TargetKind;
  /** Absolute path of the handler module. */
  readonly entry: string;
  /** The route it serves; absent for the authorizer, the baseline and the reference. */
  readonly route?: Route;
  /** Set for a function that serves static files: see {@link StaticAssets}. */
  readonly staticAssets?: StaticAssets;
}

const fromRoot = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

export const BASELINE: Target = {
  name: 'baseline',
  kind: 'baseline',
  entry: fromRoot('bench/baseline/handler.ts'),
};
/** The baselines of the functions with a grant beside their table's: see `bench/baseline/with-*.ts`. */
export const CLIENT_BASELINES: readonly Target[] = [
  { name: 'baseline+s3', kind: 'client-baseline', entry: fromRoot('bench/baseline/with-s3.ts') },
  { name: 'baseline+kms', kind: 'client-baseline', entry: fromRoot('bench/baseline/with-kms.ts') },
];

/**
 * The baseline a function's bundle and cold init are compared with: the one with the SDK client its
 * second grant needs (S3 for the images bucket, KMS to seal secrets), else the DynamoDB-only one.
 * Like with like: an image function cannot be an S3 client lighter, nor import it faster.
 */
export function bundleBaselineOf(target: Target): string {
  if (target.route?.images) return 'baseline+s3';
  if (target.route?.signingSecrets === 'seal') return 'baseline+kms';
  return BASELINE.name;
}

export const HELLO: Target = { name: 'hello', kind: 'reference', entry: fromRoot('bench/hello/handler.ts') };

/** The functions whose bundle is the static files they serve, by function folder. */
const STATIC_ASSET_FUNCTIONS: Readonly<Record<string, StaticAssets>> = {
  'api-docs-asset': {
    reason: 'its bundle is the Swagger UI files it serves',
    module: fromRoot('functions/api-docs-asset/assets.generated.js'),
  },
};

/** Every deployed function, in the order the report lists them: the authorizer first, then the routes. */
export const FUNCTIONS: readonly Target[] = [
  { name: 'authorizer', kind: 'function', entry: fromRoot('functions/authorizer/handler.ts') },
  ...routes.map(
    (route): Target => ({
      name: route.functionDir,
      kind: 'function',
      entry: fromRoot(`functions/${route.functionDir}/handler.ts`),
      route,
      ...(STATIC_ASSET_FUNCTIONS[route.functionDir]
        ? { staticAssets: STATIC_ASSET_FUNCTIONS[route.functionDir] }
        : {}),
    }),
  ),
];

export const ALL_TARGETS: readonly Target[] = [BASELINE, HELLO, ...CLIENT_BASELINES, ...FUNCTIONS];

/** Physical table names as a deployment would have them; nothing is called at init, so any name does. */
export const BENCH_TABLE_NAMES: Readonly<Record<TableName, string>> = {
  pets: 'wallet-catalog-bench-pets',
  wallets: 'wallet-catalog-bench-wallets',
  webhooks: 'wallet-catalog-bench-webhooks',
};

/** The images bucket as a deployment would name it; nothing calls S3 at init, and the warm run stubs it. */
export const BENCH_BUCKET_NAMES: Readonly<Record<BucketName, string>> = {
  images: 'wallet-catalog-bench-images',
};

/** The secrets' key as a deployment names it; nothing calls KMS at init, and the warm run stubs it. */
export const BENCH_KMS_KEY_ARN =
  'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-0000000000be';

/**
 * The variables the Lambda runtime sets for every nodejs24.x function at 1024 MB. The SDK reads
 * some of them (region, credentials, execution environment) when its client is constructed.
 */
export function lambdaRuntimeEnvironment(functionName: string, memoryMb: number): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_LAMBDA_FUNCTION_NAME: `wallet-catalog-bench-${functionName}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_ACCESS_KEY_ID: 'ASIABENCHMARKBENCHMK',
    AWS_SECRET_ACCESS_KEY: 'bench-secret-access-key-not-used-for-anything',
    AWS_SESSION_TOKEN: 'bench-session-token',
    AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
    // Set by Lambda's advanced logging controls (JSON format, application level INFO).
    AWS_LAMBDA_LOG_FORMAT: 'JSON',
    AWS_LAMBDA_LOG_LEVEL: 'INFO',
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
  };
}

/**
 * The V8 heap limits Lambda's Node.js bootstrap (`/var/runtime/bootstrap`) passes for a function
 * of `memoryMb`: a tenth of the memory for the young generation, half of that per semi-space, the
 * rest for the old generation. The semi-space limit decides how often a warm function pays a
 * scavenge, and so what a warm invocation costs on average.
 */
export function lambdaNodeOptions(memoryMb: number): string[] {
  const newSpaceMb = Math.floor(memoryMb / 10);
  return [
    `--max-semi-space-size=${Math.floor(newSpaceMb / 2)}`,
    `--max-old-space-size=${memoryMb - newSpaceMb}`,
  ];
}

/**
 * The full environment a target's module initialises with: the runtime's variables and what CDK
 * gives the function (`infra/environment.ts`). Nothing else from the parent leaks in, in particular
 * no NODE_OPTIONS or NODE_COMPILE_CACHE, which would change what an import costs.
 */
export function targetEnvironment(
  target: Target,
  issuer: Pick<JwksServer, 'issuerUrl' | 'jwksUrl'>,
  memoryMb: number,
): Record<string, string> {
  const functionEnv =
    target.route !== undefined
      ? functionEnvironment(target.route, defaultServiceSettings, BENCH_TABLE_NAMES, BENCH_BUCKET_NAMES)
      : target.name === 'authorizer'
        ? authorizerEnvironment({
            issuer: issuer.issuerUrl,
            audience: LOCAL_AUDIENCE,
            jwksUrl: issuer.jwksUrl,
          })
        : {};
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...lambdaRuntimeEnvironment(target.name, memoryMb),
    ...functionEnv,
    // The service stack adds the stage name to every function's environment (metric dimensions).
    ...(target.kind === 'function' ? { STAGE: 'bench' } : {}),
    // A function that seals webhook secrets gets the secrets' KMS key, as deployed (grantSealing of
    // infra/stacks/service-stack.ts): it loads the KMS client at init and asks KMS for a data key per
    // secret, which the warm run's stub answers.
    ...(target.route?.signingSecrets === 'seal' ? { [KMS_KEY_ENV]: BENCH_KMS_KEY_ARN } : {}),
  };
}
