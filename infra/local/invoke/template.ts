/**
 * The functions of the synthesized service stack, as CloudFormation would create them: handler,
 * environment, memory, timeout, runtime and the bundle directory CDK wrote into `cdk.out`.
 * `cdk.out` is reused while it is newer than every input of the synthesis, and synthesized again
 * (`cdk synth -q`, the same command a deploy runs) otherwise.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { CREDIT_POSTER_NAME } from '#infra/credit-poster-settings.ts';
import { routes } from '#shared/routes.ts';

/** One `AWS::Lambda::Function` of the template. */
export interface TemplateFunction {
  readonly logicalId: string;
  /** The operationId of its route, or `authorizer`; from the construct path. */
  readonly name: string;
  readonly handler: string;
  readonly runtime: string;
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  /** Plain strings, or the CloudFormation expression AWS resolves at deploy time (a table name). */
  readonly environment: Readonly<Record<string, unknown>>;
  /** Absolute path of the bundle directory (`cdk.out/asset.<hash>`). */
  readonly assetDir: string;
}

/** The inputs of a synthesis: a file under these newer than `cdk.out` makes it stale. */
const SYNTH_INPUTS = ['functions', 'shared', 'infra', 'package-lock.json', 'cdk.json', 'tsconfig.json'];
/** Local-only code is not synthesized; changing it leaves the bundles as they are. */
const NOT_SYNTHESIZED = new Set([join(PROJECT_ROOT, 'infra', 'local')]);

/** The service stack's name for `stage` (see `infra/stacks/service-stage.ts`). */
export const serviceStackName = (stage: string): string => `wallet-catalog-${stage}-service`;

function newestMtime(path: string): number {
  if (NOT_SYNTHESIZED.has(path) || !existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/**
 * Whether `cdk.out` holds the stage's service template and is newer than every input of the
 * synthesis (by modification time: a checkout or an edit bumps it; `-c` overrides given to an
 * earlier `cdk synth` are not detected, so pass `--synth` after synthesizing with other context).
 */
export function isFresh(cdkOut: string, stage: string): boolean {
  const template = join(cdkOut, `${serviceStackName(stage)}.template.json`);
  if (!existsSync(template)) return false;
  const synthesized = statSync(join(cdkOut, 'manifest.json'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = Math.max(...SYNTH_INPUTS.map((input) => newestMtime(join(PROJECT_ROOT, input))));
  return synthesized > inputs && statSync(template).mtimeMs >= inputs;
}

/** The `cdk synth` command line and its options, for {@link synthesize} and {@link synthesizeAsync}. */
function synthCommand(cdkOut: string, stage: string) {
  const args = [
    join(PROJECT_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'),
    'synth',
    '-q',
    '-c',
    `stage=${stage}`,
    // The stage's own stacks even where cdk.json configures a pipeline (which would hold them nested).
    '-c',
    'pipeline:connectionArn=',
    '--output',
    cdkOut,
  ];
  // cdk.json runs the app with `node`: this Node (the project's 24), not an older one on the PATH.
  const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  return { args, options: { cwd: PROJECT_ROOT, env } };
}

/** Runs `cdk synth -q -c stage=<stage> -c pipeline:connectionArn=` into `cdkOut`, with the project's own CDK CLI. */
export function synthesize(cdkOut: string, stage: string): void {
  const { args, options } = synthCommand(cdkOut, stage);
  execFileSync(process.execPath, args, { ...options, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** {@link synthesize} without blocking the event loop (a running server keeps answering); rejects with CDK's output. */
export async function synthesizeAsync(cdkOut: string, stage: string): Promise<void> {
  const { args, options } = synthCommand(cdkOut, stage);
  try {
    await promisify(execFile)(process.execPath, args, { ...options, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`cdk synth failed: ${stderr?.trim() || (error as Error).message}`);
  }
}

interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

/** Every Lambda function of the stage's service template in `cdkOut`. */
export function readFunctions(cdkOut: string, stage: string): TemplateFunction[] {
  const template = JSON.parse(
    readFileSync(join(cdkOut, `${serviceStackName(stage)}.template.json`), 'utf8'),
  ) as { Resources: Record<string, CfnResource> };
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([logicalId, resource]) => {
      const props = resource.Properties ?? {};
      const cdkPath = String(resource.Metadata?.['aws:cdk:path'] ?? '');
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string') {
        throw new Error(`${logicalId} has no aws:asset:path metadata: synthesize with the CDK CLI`);
      }
      const environment = (props.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      return {
        logicalId,
        // `<stack>/<construct id>/Function/Resource`, or without path metadata the logical id
        // `<construct id>Function<hash>`: the construct id is the operationId.
        name: cdkPath.split('/')[1] ?? /^(.+)Function[0-9A-F]{8}$/.exec(logicalId)?.[1] ?? logicalId,
        handler: String(props.Handler),
        runtime: String(props.Runtime),
        memorySizeMb: Number(props.MemorySize ?? 128),
        timeoutSeconds: Number(props.Timeout ?? 3),
        environment: environment ?? {},
        // Relative to cdk.out for bundled assets; absolute when bundling was skipped.
        assetDir: resolve(cdkOut, assetPath),
      };
    });
}

/**
 * The function called `id`: an operationId of the route table, `authorizer`, or a logical id of
 * the template, case-insensitively. Throws listing the names there are.
 */
export function findFunction(functions: readonly TemplateFunction[], id: string): TemplateFunction {
  const wanted = id.toLowerCase();
  const found = functions.find(
    (fn) => fn.name.toLowerCase() === wanted || fn.logicalId.toLowerCase() === wanted,
  );
  if (found) return found;
  const names = functions.map((fn) => `${fn.name} (${fn.logicalId})`).join(', ');
  throw new Error(`No function "${id}" in the template; there are: ${names}`);
}

/** The names a function can be invoked by, for help texts: every operationId, the authorizer and the credit poster. */
export const invocableNames = (): string[] => [
  ...routes.map((route) => route.operationId),
  'authorizer',
  CREDIT_POSTER_NAME.charAt(0).toLowerCase() + CREDIT_POSTER_NAME.slice(1),
];
