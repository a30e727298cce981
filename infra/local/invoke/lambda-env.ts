/**
 * What Lambda puts around a function: the reserved environment variables and the Node.js options
 * its `nodejs24.x` bootstrap derives from the memory size. Built from nothing but the function's
 * own settings, so a local run sees neither the developer's shell (AWS credentials included)
 * nor another function's variables.
 */

/** The settings of one function, as its template gives them (environment already resolved). */
export interface FunctionSettings {
  /** The function's name; in the logical id form locally (`getBalanceFunctionBD95FDC0`). */
  readonly functionName: string;
  /** Directory holding the bundle: `LAMBDA_TASK_ROOT` and the working directory. */
  readonly taskRoot: string;
  /** `<module>.<export>`, e.g. `index.handler`. */
  readonly handler: string;
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  /** The template's `Environment.Variables`, with anything only AWS could resolve replaced by local values. */
  readonly environment: Readonly<Record<string, string>>;
  /** e.g. `nodejs24.x`. */
  readonly runtime: string;
  /** The region and account the ARNs and `AWS_REGION` name. */
  readonly region: string;
  readonly accountId: string;
}

/** Variables the function cannot set itself (Lambda refuses them in `Environment`). */
const RESERVED =
  /^(_HANDLER|_X_AMZN_TRACE_ID|AWS_REGION|AWS_EXECUTION_ENV|AWS_LAMBDA_.*|LAMBDA_TASK_ROOT|LAMBDA_RUNTIME_DIR)$/;

/** The ARN callers use to invoke the function (unqualified, so `$LATEST`). */
export const functionArn = (fn: FunctionSettings): string =>
  `arn:aws:lambda:${fn.region}:${fn.accountId}:function:${fn.functionName}`;

/**
 * The environment of one execution environment: the function's own variables, then Lambda's
 * reserved ones on top, as Lambda does (a function cannot override them). `logStream` names the
 * environment, as each Lambda environment writes its own stream.
 */
export function lambdaEnvironment(fn: FunctionSettings, logStream: string): Record<string, string> {
  const own = Object.fromEntries(Object.entries(fn.environment).filter(([name]) => !RESERVED.test(name)));
  return {
    // The local PATH, not Lambda's /var/lang/bin…: the one piece of the machine a process needs.
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    ...own,
    _HANDLER: fn.handler,
    AWS_REGION: fn.region,
    AWS_DEFAULT_REGION: fn.region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySizeMb),
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: logStream,
    LAMBDA_TASK_ROOT: fn.taskRoot,
    LAMBDA_RUNTIME_DIR: fn.taskRoot,
  };
}

/**
 * The heap limits Lambda's Node.js bootstrap sets from the memory size: about 10 % of it for the
 * young generation (capped as V8 caps it), the old generation 90 % of it less that, so that
 * a function near its memory size fails with a heap error here too rather than swapping.
 */
export function nodeOptionsFor(memorySizeMb: number): string[] {
  const semiSpace = Math.min(Math.max(Math.floor(memorySizeMb * 0.05), 1), 64);
  const oldSpace = Math.max(Math.floor(memorySizeMb * 0.9) - 3 * semiSpace, 16);
  return [`--max-semi-space-size=${semiSpace}`, `--max-old-space-size=${oldSpace}`, '--expose-gc'];
}
