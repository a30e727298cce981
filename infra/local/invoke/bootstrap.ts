/**
 * One Lambda execution environment: the process `pool.ts` forks for a function, with the
 * function's bundle directory as working directory and exactly the environment Lambda would give
 * it. It follows the Lambda Node.js 24 handler contract (see
 * docs/decisions/local-lambda-runner.md): `_HANDLER` names `<module>.<export>` under
 * `LAMBDA_TASK_ROOT`; the module is imported once (init), then invocations arrive one at a time
 * over IPC and each gets the handler's awaited result or Lambda's error payload back.
 *
 * Nothing of the project is imported besides the message types: the bundle must run on its own.
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { type EnvironmentMessage, type InvokeMessage, type LambdaError, toLambdaError } from './protocol.ts';

/** The wording of the Node.js 24 runtime for a handler that declares a callback parameter. */
const CALLBACK_REMOVED =
  'ERROR: AWS Lambda has removed support for callback-based function handlers starting with Node.js 24. You need to modify this function to use a supported handler signature to use Node.js 24 or later. For more information see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-handler.html.';

class RuntimeError extends Error {
  constructor(errorType: string, message: string) {
    super(message);
    this.name = errorType;
  }
}

type Handler = (event: unknown, context: Context) => unknown;

const send = (message: EnvironmentMessage, then?: () => void): void => {
  process.send?.(message, undefined, {}, () => then?.());
};

const maxRssKb = (): number => process.resourceUsage().maxRSS;

/**
 * The runtime's own copy of the AWS SDK for JavaScript v3, which Lambda's Node.js runtimes
 * provide outside the task root: a bundle may leave these packages out and still load on Lambda.
 */
const RUNTIME_PROVIDED = /^(@aws-sdk|@smithy)\//;

/**
 * Confines module resolution to the task root, as Lambda's file system does: the bundles of
 * `cdk.out` sit inside the repository, where Node would find an import the bundle left out (a
 * dependency marked external by mistake) in the project's `node_modules` and load it, while on
 * Lambda, with nothing but the bundle in `/var/task`, the same import fails the init.
 */
function confineResolution(taskRoot: string): void {
  const root = resolve(taskRoot) + sep;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (!resolved.url.startsWith('file:') || RUNTIME_PROVIDED.test(specifier)) return resolved;
      if (fileURLToPath(resolved.url).startsWith(root)) return resolved;
      const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : root;
      const error = new Error(
        `Cannot find ${specifier.startsWith('.') || specifier.startsWith('/') ? 'module' : 'package'} '${specifier}' imported from ${parent}`,
      ) as NodeJS.ErrnoException;
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    },
  });
}

/** Imports the handler module and finds the export, failing as Lambda's runtime fails. */
async function loadHandler(): Promise<Handler> {
  const spec = process.env._HANDLER ?? '';
  const taskRoot = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
  const dot = spec.lastIndexOf('.');
  if (dot <= 0 || dot === spec.length - 1) {
    throw new RuntimeError('Runtime.MalformedHandlerName', `Bad handler ${spec}`);
  }
  const moduleName = spec.slice(0, dot);
  const exportName = spec.slice(dot + 1);
  // The runtime tries these extensions in this order.
  const file = ['.js', '.mjs', '.cjs'].map((ext) => join(taskRoot, moduleName + ext)).find(existsSync);
  if (file === undefined) {
    throw new RuntimeError('Runtime.ImportModuleError', `Error: Cannot find module '${moduleName}'`);
  }
  confineResolution(taskRoot);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new RuntimeError('Runtime.ImportModuleError', String(error));
    }
    if (error instanceof SyntaxError) throw new RuntimeError('Runtime.UserCodeSyntaxError', String(error));
    // Anything else thrown at load (a missing setting, say) keeps its own type, as on Lambda.
    throw error;
  }
  const handler = module[exportName];
  if (typeof handler !== 'function') {
    throw new RuntimeError('Runtime.HandlerNotFound', `${spec} is undefined or not exported`);
  }
  if (handler.length >= 3) throw new RuntimeError('Runtime.CallbackHandlerDeprecated', CALLBACK_REMOVED);
  return handler as Handler;
}

function contextFor(message: InvokeMessage): Context {
  const env = process.env;
  const unsupported = () => {
    throw new Error('context.done/succeed/fail were removed in the Node.js 24 runtime');
  };
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: env.AWS_LAMBDA_FUNCTION_NAME ?? '',
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST',
    invokedFunctionArn: message.invokedFunctionArn,
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '',
    awsRequestId: message.requestId,
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME ?? '',
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME ?? '',
    getRemainingTimeInMillis: () => Math.max(0, message.deadlineMs - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

/** The runtime's own log line for a failed invocation, in the JSON log format the templates set. */
function logInvokeError(requestId: string, error: LambdaError): void {
  process.stderr.write(
    `${JSON.stringify({
      timestamp: new Date().toISOString(),
      level: 'ERROR',
      requestId,
      message: { errorType: error.errorType, errorMessage: error.errorMessage, stackTrace: error.trace },
    })}\n`,
  );
}

let current: string | undefined;

async function invoke(handler: Handler, message: InvokeMessage): Promise<void> {
  current = message.requestId;
  if (message.traceId === undefined) delete process.env._X_AMZN_TRACE_ID;
  else process.env._X_AMZN_TRACE_ID = message.traceId;
  try {
    const result = await handler(JSON.parse(message.event), contextFor(message));
    let payload: string;
    try {
      payload = JSON.stringify(result) ?? 'null';
    } catch {
      throw new RuntimeError('Runtime.JSONStringifyError', 'Unable to stringify response body');
    }
    send({ type: 'result', requestId: message.requestId, payload, maxRssKb: maxRssKb() });
  } catch (thrown) {
    const error = toLambdaError(thrown);
    logInvokeError(message.requestId, error);
    send({ type: 'error', requestId: message.requestId, error, maxRssKb: maxRssKb() });
  } finally {
    current = undefined;
  }
}

/**
 * An error nobody awaited ends the environment, as on Lambda: the invocation in flight (if any)
 * fails with it, and the pool starts a fresh environment for the next one.
 */
function crash(errorType: string | undefined, thrown: unknown): void {
  const error = toLambdaError(thrown);
  const reported = errorType === undefined ? error : { ...error, errorType };
  logInvokeError(current ?? '', reported);
  const exit = () => process.exit(129);
  if (current === undefined) exit();
  else send({ type: 'error', requestId: current, error: reported, maxRssKb: maxRssKb(), fatal: true }, exit);
}
process.on('uncaughtException', (error) => crash(undefined, error));
process.on('unhandledRejection', (reason) => crash('Runtime.UnhandledPromiseRejection', reason));

try {
  const handler = await loadHandler();
  process.on('message', (message: InvokeMessage) => {
    if (message.type === 'invoke') void invoke(handler, message);
  });
  send({ type: 'ready', initDurationMs: performance.now() });
} catch (thrown) {
  const error = toLambdaError(thrown);
  logInvokeError('', error);
  send({ type: 'init-error', error, initDurationMs: performance.now() }, () => process.exit(1));
}
