/**
 * What `npm run token` does, as a function of its arguments: the CLI (`token.ts`) is this, run
 * with the process's arguments and output, so that tests run it in-process.
 */
import { parseArgs } from 'node:util';
import { SCOPES } from '#shared/routes.ts';
import { defaultPort, MAX_LOCAL_TTL_SECONDS, signLocalToken, tooLongMessage } from './issuer.ts';
import { chooseRunningStack, describeChoice } from './stack-record.ts';

const USAGE = `Usage: npm run token -- --sub <id> --scope "<space-separated scopes>" [--ttl <seconds>]

  --sub    the caller's id (the token's sub)
  --scope  scopes to grant, e.g. "read:pets write:pets"; "" for none
           known: ${Object.keys(SCOPES).join(' ')}
  --ttl    lifetime in seconds (default 3600, at most ${MAX_LOCAL_TTL_SECONDS}); negative for an expired token`;

class UsageError extends Error {}

const options = {
  sub: { type: 'string' },
  scope: { type: 'string' },
  ttl: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface TokenCommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/**
 * Prints a token for `args` on `stdout`, and nothing else, or the reason on `stderr`; resolves to
 * the exit code: 0, 2 for a usage error, 1 for any other. `port` and `stateDir` make and sign the
 * token; when absent, `PORT` and `LOCAL_STATE_DIR` (`signLocalToken`'s defaults).
 */
export async function runTokenCommand(
  args: readonly string[],
  io: TokenCommandIo,
  issuer: { readonly port?: number; readonly stateDir?: string } = {},
): Promise<number> {
  try {
    const { values } = parseArgs({ args: joinNegativeValues(args), options, strict: true });
    if (values.help) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    if (values.sub === undefined || values.sub === '') throw new UsageError('--sub is required');
    if (values.scope === undefined) throw new UsageError('--scope is required ("" for a token with none)');
    const ttlSeconds = values.ttl === undefined ? undefined : parseTtl(values.ttl);
    warnOfUnknownScopes(values.scope, io);
    const port = issuer.port ?? (await issuerPort(issuer.stateDir, io));
    const token = await signLocalToken({ sub: values.sub, scope: values.scope, ttlSeconds, ...issuer, port });
    io.stdout(`${token}\n`);
    return 0;
  } catch (error) {
    const usage = isUsageError(error);
    io.stderr(`token: ${(error as Error).message}\n${usage ? `\n${USAGE}\n` : ''}`);
    return usage ? 2 : 1;
  }
}

/**
 * The port whose gateway the token names as its issuer: `PORT`'s stack, or the only one running,
 * said on stderr (stdout holds the token alone). With none running, `PORT`'s default, so a token
 * can be made before `npm start`; with several, none is guessed.
 */
async function issuerPort(stateDir: string | undefined, io: TokenCommandIo): Promise<number> {
  const choice = await chooseRunningStack(stateDir === undefined ? {} : { stateDir });
  if (choice.stack) {
    io.stderr(`token: for ${describeChoice(choice)}\n`);
    return choice.port;
  }
  if (choice.running.length > 1) throw new Error(choice.problem);
  const port = choice.port ?? defaultPort();
  io.stderr(`token: no local stack runs yet; the token names the gateway on port ${port} as its issuer\n`);
  return port;
}

/**
 * `parseArgs` refuses `--ttl -60` as ambiguous (the value looks like an option); joining it into
 * `--ttl=-60` keeps the obvious spelling of a negative lifetime working.
 */
function joinNegativeValues(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === '--ttl' && next !== undefined && /^-\d+$/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** Our own checks, and `parseArgs`' unknown options and missing values. */
function isUsageError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
}

function parseTtl(raw: string): number {
  const ttl = Number(raw);
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(ttl)) {
    throw new UsageError(`--ttl must be a whole number of seconds, got "${raw}"`);
  }
  if (ttl > MAX_LOCAL_TTL_SECONDS) throw new UsageError(`--ttl: ${tooLongMessage(ttl)}`);
  return ttl;
}

/** Unknown scopes are allowed (they make tokens the API must refuse), but usually a typo. */
function warnOfUnknownScopes(scope: string, io: TokenCommandIo): void {
  const unknown = scope.split(' ').filter((s) => s !== '' && !Object.hasOwn(SCOPES, s));
  if (unknown.length > 0) io.stderr(`token: warning: unknown scope ${unknown.join(' ')}\n`);
}
