/**
 * `npm start`: the API on http://127.0.0.1:$PORT (3000 by default) through the local gateway,
 * with DynamoDB Local and a local S3 (s3rver, the pets' images) behind it, in memory unless
 * `--db-path <dir>` (or DYNAMODB_LOCAL_PATH) or `--persist` (`<state dir>/dynamodb`, and
 * `<state dir>/s3` for the images) keeps the data; without `--persist` the images live in a
 * temporary directory removed at stop. Stops everything on SIGINT/SIGTERM/SIGHUP,
 * when its parent (npm) goes away, and exits 1 if DynamoDB Local dies under it.
 * `--bundled` runs each function from its bundle in the synthesized `cdk.out`, in execution
 * environments of its own, as Lambda would (see `invoke/bundled-functions.ts`).
 * The functions reach DynamoDB Local through a proxy that raises DynamoDB's transaction conflicts,
 * which DynamoDB Local never does (`dynamodb-proxy.ts`); `--no-conflicts` connects them directly.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type CallerRateLimit, defaultCallerRateLimit } from '#infra/environment.ts';
import { optionalEnv } from '#shared/config.ts';
import { SCOPES } from '#shared/routes.ts';
import { type AccessLogEntry, formatAccessLog } from './access-log.ts';
import { PortInUseError } from './dynamodb-local.ts';
import { TOUCHES_PATH } from './dynamodb-proxy.ts';
import { type LocalStack, startLocalStack } from './gateway.ts';
import type { FunctionStats } from './invoke/bundled-functions.ts';
import { defaultPort } from './issuer.ts';
import { readRunningStack, removeOwnRecordSync, stackRecordPath } from './stack-record.ts';
import { localStateDir } from './state.ts';

const USAGE = `Usage: npm start [-- --db-path <dir> | --persist] [--dynamodb-port <port>] [--no-conflicts] [--bundled] [--quiet]

  PORT=<port>      port of the API (default 3000; 0: any free one); npm run token, invoke, wallet:fund and
                   wallet:audit find the one stack running by themselves, PORT picks one of several
  --db-path <dir>  keep DynamoDB Local's data in <dir> (or DYNAMODB_LOCAL_PATH); in memory otherwise
  --persist        short for --db-path <state dir>/dynamodb, and keeps the images (local S3,
                   s3rver) in <state dir>/s3 instead of a temporary directory removed at stop
  --dynamodb-port  fixed port for DynamoDB Local (default: any free port)
  --dynamodb-endpoint <url>  use this running DynamoDB (Local) instead of starting one
  --no-conflicts   let the functions reach DynamoDB Local directly. By default they go through a
                   proxy that behaves as DynamoDB on AWS under contention, which DynamoDB Local
                   does not: a transaction naming an item another request has in flight is
                   cancelled (TransactionConflict), a plain write on an item in a transaction in
                   flight fails (TransactionConflictException); it counts the write attempts per
                   item: GET <proxy>/proxy/touches (DELETE resets)
  --caller-rate-limit <n|off>   requests per caller (Authorization header) per window, as the
                   deployed WAF rule (default ${defaultCallerRateLimit.limit}; or CALLER_RATE_LIMIT)
  --caller-rate-window <s>      the window: 60, 120, 300 or 600 s (default ${defaultCallerRateLimit.windowSeconds}; or CALLER_RATE_WINDOW_SECONDS)
  --bundled        run each function's bundle from cdk.out (synthesized first when stale), each in
                   execution environments of its own with its template's environment; the access
                   log marks cold starts, and a summary per function is printed on stop
  --stage <stage>  with --bundled: the stage to synthesize (default: cdk.json's)
  --synth          with --bundled: synthesize even if cdk.out looks fresh
  --quiet          no access log (nor, with --bundled, the functions' log lines)
  LOCAL_STATE_DIR  where issuer keys and the running stack's record live (default <repo>/.local)`;

const options = {
  'db-path': { type: 'string' },
  persist: { type: 'boolean' },
  'dynamodb-port': { type: 'string' },
  'dynamodb-endpoint': { type: 'string' },
  'no-conflicts': { type: 'boolean' },
  'caller-rate-limit': { type: 'string' },
  'caller-rate-window': { type: 'string' },
  bundled: { type: 'boolean' },
  stage: { type: 'string' },
  synth: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const;

let values: ReturnType<typeof parseArgs<{ options: typeof options }>>['values'];
try {
  ({ values } = parseArgs({ options, strict: true }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${USAGE}`, 2);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

// PORT=0: any free port, the one taken named in the banner (what the tests start it on: a port
// found free first could be taken before the gateway binds it). No other command takes 0.
const port = process.env.PORT === '0' ? 0 : defaultPort();
const stateDir = localStateDir();
const dbPath = values.persist
  ? join(stateDir, 'dynamodb')
  : (values['db-path'] ?? optionalEnv('DYNAMODB_LOCAL_PATH'));
const s3Path = values.persist ? join(stateDir, 's3') : undefined;
const dynamodbPort = values['dynamodb-port'] === undefined ? undefined : Number(values['dynamodb-port']);
if (
  dynamodbPort !== undefined &&
  !(Number.isInteger(dynamodbPort) && dynamodbPort > 0 && dynamodbPort < 65_536)
) {
  fail(`--dynamodb-port must be a TCP port, got "${values['dynamodb-port']}"`, 2);
}

const callerRateLimit = ((): CallerRateLimit | null => {
  const limitText = values['caller-rate-limit'] ?? optionalEnv('CALLER_RATE_LIMIT');
  if (limitText === 'off') return null;
  const windowText = values['caller-rate-window'] ?? optionalEnv('CALLER_RATE_WINDOW_SECONDS');
  const limit = limitText === undefined ? defaultCallerRateLimit.limit : Number(limitText);
  const windowSeconds = windowText === undefined ? defaultCallerRateLimit.windowSeconds : Number(windowText);
  if (!(Number.isSafeInteger(limit) && limit > 0)) {
    fail(`--caller-rate-limit must be a positive integer or "off", got "${limitText}"`, 2);
  }
  if (![60, 120, 300, 600].includes(windowSeconds)) {
    fail(`--caller-rate-window must be 60, 120, 300 or 600, got "${windowText}"`, 2);
  }
  return { limit, windowSeconds: windowSeconds as CallerRateLimit['windowSeconds'] };
})();
const dynamodbEndpoint = values['dynamodb-endpoint'];
if (!values.bundled && (values.stage !== undefined || values.synth)) {
  fail(`--stage and --synth go with --bundled\n\n${USAGE}`, 2);
}

let stack: LocalStack | undefined;
let starting = true;
let stopping = false;
/** The exit code of the first stop asked for, kept for a stop asked for while starting. */
let stopCode = 0;

/** Stops what was started, Java included, then exits. */
async function shutdown(code: number): Promise<void> {
  if (stack?.mode === 'bundled') process.stdout.write(formatFunctionStats(stack.functionStats()));
  try {
    await stack?.stop();
    process.stderr.write('Local stack stopped.\n');
  } catch (error) {
    process.stderr.write(`Stopping failed: ${(error as Error).message}\n`);
    code ||= 1;
  }
  process.exit(code);
}

/**
 * A signal sent to the whole process group (what `timeout`, CI runners and process managers send,
 * and what Ctrl+C in a terminal does) reaches this process twice: once itself, once passed on by
 * npm. Requests this close to the first are that same request, not an impatient second one.
 */
const SAME_REQUEST_MS = 1_000;
let stopRequestedAt = 0;

/** Asks for a stop (once); a later second request means "now": the orphan watchdog still ends DynamoDB Local. */
function requestStop(reason: string, code: number): void {
  if (stopping) {
    if (performance.now() - stopRequestedAt < SAME_REQUEST_MS) return;
    process.exit(code || 1);
  }
  stopping = true;
  stopCode = code;
  stopRequestedAt = performance.now();
  process.stderr.write(`\n${reason}: stopping the local stack…\n`);
  // While starting there is nothing to stop yet; the start below stops what it made.
  if (!starting) void shutdown(code);
}

// However it ends (a stop asked for twice exits at once), its record must not outlive it: a
// record left behind would pass for a running stack until its pid is reused.
// The record is named after the port taken, which PORT=0 leaves to the system.
process.on('exit', () => removeOwnRecordSync(stackRecordPath(stateDir, stack?.port ?? port), process.pid));

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => requestStop(signal, 0));
}

// npm 11 passes SIGINT and SIGTERM only to the `sh -c` it runs a script in: sh dies of SIGTERM
// without passing it on (and npm exits at once), and holds SIGINT until its child ends. Hence
// `exec` in the start script, which makes this process npm's child. Should npm still go away
// (SIGKILL, another script shell), this process is reparented, which is how it learns that
// whoever started it is gone. Polled: Node has no event for it.
const parentPid = process.ppid;
const parentWatch = setInterval(() => {
  if (process.ppid === parentPid) return;
  clearInterval(parentWatch);
  requestStop(`parent process ${parentPid} exited`, 0);
}, 200);
parentWatch.unref();
process.on('uncaughtException', (error) => {
  process.stderr.write(`Unexpected error: ${error.stack ?? error.message}\n`);
  stopping = true;
  void shutdown(1);
});

try {
  stack = await startLocalStack({
    port,
    stateDir,
    ...(dbPath === undefined ? {} : { dbPath }),
    ...(s3Path === undefined ? {} : { s3Path }),
    ...(dynamodbPort === undefined ? {} : { dynamodbPort }),
    ...(dynamodbEndpoint === undefined ? {} : { dynamodbEndpoint }),
    conflicts: !values['no-conflicts'],
    callerRateLimit,
    ...(values.quiet ? {} : { onRequest: printAccessLog }),
    ...(values.bundled
      ? {
          bundled: {
            ...(values.stage === undefined ? {} : { stage: values.stage }),
            synth: values.synth ? ('always' as const) : ('if-stale' as const),
            ...(values.quiet ? {} : { onLog: printFunctionLog }),
          },
        }
      : {}),
    // Never keep answering 5xx without a database: say so and exit non-zero.
    onDynamoDbExit: (message) => {
      // Java is in a process group of its own, out of Ctrl+C's reach; a signal sent to it alone
      // may still come with one to this process: let that signal's own (clean) stop win the race.
      setTimeout(() => {
        if (!stopping) requestStop(message, 1);
      }, 100);
    },
  });
} catch (error) {
  // A stop asked for while starting may fail the start (its stack stopped under it): that is the
  // stop that was asked for.
  if (stopping) process.exit(stopCode);
  if (error instanceof PortInUseError) fail(error.message, 1);
  if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    const running = await readRunningStack(port, stateDir).catch(() => undefined);
    fail(
      running
        ? `A local stack already runs at ${running.baseUrl} (pid ${running.pid}).`
        : `Port ${port} is in use; choose another with PORT=<port> npm start.`,
      1,
    );
  }
  fail(`Could not start the local stack: ${(error as Error).stack ?? error}`, 1);
}

starting = false;
// DynamoDB Local that died while the rest started is still a failure (1), Ctrl+C still not (0).
if (stopping) await shutdown(stopCode);

const envPrefix = [
  ...(process.env.PORT ? [`PORT=${stack.port}`] : []),
  ...(process.env.LOCAL_STATE_DIR ? [`LOCAL_STATE_DIR=${stateDir}`] : []),
].join(' ');
process.stdout.write(
  [
    `Local API ready at ${stack.baseUrl}`,
    `  Functions:        ${stack.mode === 'bundled' ? `bundled, from ${stack.functionsSource}; an environment per concurrent request` : stack.functionsSource}`,
    `  DynamoDB Local at ${stack.dynamodbLocalEndpoint} (${dbPath === undefined ? 'in memory' : `data in ${dbPath}`})`,
    `  Local S3 at       ${stack.s3Endpoint} (s3rver; the pets' images ${s3Path === undefined ? 'in a temporary directory removed at stop' : `in ${s3Path}`})`,
    stack.dynamodbProxy
      ? `  Conflicts:        on, as DynamoDB on AWS: the functions use ${stack.dynamodbEndpoint} (touches per item: ${stack.dynamodbEndpoint}${TOUCHES_PATH}); --no-conflicts turns it off`
      : '  Conflicts:        off (--no-conflicts): DynamoDB Local runs one transaction at a time, contention stays hidden',
    `  OpenAPI document: ${stack.baseUrl}/api/openapi.json`,
    `  Per-caller limit: ${callerRateLimit === null ? 'off' : `${callerRateLimit.limit} requests per ${callerRateLimit.windowSeconds} s per Authorization header (as the deployed WAF rule)`}`,
    `  Get a token:      ${envPrefix ? `${envPrefix} ` : ''}npm run -s token -- --sub alice --scope "${Object.keys(SCOPES).join(' ')}"`,
    '  Ctrl+C stops everything.',
    ...Object.entries(stack.loadErrors).map(
      ([name, message]) =>
        `  WARNING: ${stack?.mode === 'bundled' ? name : `functions/${name}/handler.ts`} failed to load, its routes answer 5xx: ${message}`,
    ),
    '',
  ].join('\n'),
);

function printAccessLog(entry: AccessLogEntry): void {
  process.stdout.write(formatAccessLog(entry));
}

/** A bundled function's own line (its JSON logs, the runtime's errors), named as `sam local` names them. */
function printFunctionLog(functionName: string, line: string): void {
  process.stderr.write(`${functionName} | ${line}\n`);
}

/** What the bundled functions did, printed when the stack stops. */
function formatFunctionStats(stats: Record<string, FunctionStats>): string {
  const used = Object.entries(stats).filter(([, figures]) => figures.invocations > 0);
  if (used.length === 0) return 'No function was invoked.\n';
  const width = Math.max(...used.map(([name]) => name.length));
  const lines = used.map(
    ([name, figures]) =>
      `  ${name.padEnd(width)}  ${figures.invocations} invocations, ${figures.coldStarts} cold starts`,
  );
  return `Invocations and cold starts (execution environments started) per function:\n${lines.join('\n')}\n`;
}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
