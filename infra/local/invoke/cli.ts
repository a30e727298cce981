/**
 * `npm run invoke -- <operationId|authorizer|creditPoster|logical id> [--event <file>|-]
 * [--stage <stage>] [--token <jwt>] [--synth] [-h|--help]`: `sam local invoke` without Docker.
 * Runs the function's bundle from the synthesized template (synthesizing first when `cdk.out` is
 * stale) in a fresh execution environment with the template's handler, environment, memory and
 * timeout, and prints the function's response on stdout; START/END/REPORT lines and the function's
 * own logs on stderr. Exits 0 on success or `--help`; 1 when the invocation failed (the error
 * payload is still printed), so a script can tell the function's failure from the tool's; 2 on a
 * usage error or any other error (no such function, an unreadable event, a failed synth).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { SCOPES } from '#shared/routes.ts';
import cdkJson from '../../../cdk.json' with { type: 'json' };
import { givenPort, signLocalToken } from '../issuer.ts';
import { localStateDir } from '../state.ts';
import { bundleOf } from './bundled-functions.ts';
import { EXAMPLE_SUB, eventFileName, TOKEN_EXP_PLACEHOLDER, TOKEN_PLACEHOLDER } from './events.ts';
import { localResources } from './local-resources.ts';
import { createBundlePool, formatReport } from './pool.ts';
import {
  findFunction,
  invocableNames,
  isFresh,
  readFunctions,
  serviceStackName,
  synthesize,
} from './template.ts';

const USAGE = `Usage: npm run invoke -- <function> [--event <file>|-] [--stage <stage>] [--token <jwt>] [--synth] [-h|--help]
  <function>   ${invocableNames().join(', ')}, or a logical id of the template
  --event      the event (JSON); "-" reads stdin; default events/<function in kebab-case>.json (e.g. get-balance.json)
  --stage      the stage to synthesize (default: cdk.json's "${cdkJson.context.stage}")
  --token      replaces ${TOKEN_PLACEHOLDER} in the event; default: a fresh token of the local issuer
  --synth      synthesize even if cdk.out looks fresh
  -h, --help   show this help`;

async function readEvent(option: string | undefined, name: string): Promise<string> {
  if (option === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  const path =
    option ?? join(PROJECT_ROOT, 'events', eventFileName(name.charAt(0).toLowerCase() + name.slice(1)));
  return readFileSync(path, 'utf8');
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      event: { type: 'string' },
      stage: { type: 'string', default: cdkJson.context.stage },
      token: { type: 'string' },
      synth: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [id] = positionals;
  if (values.help || id === undefined || positionals.length > 1) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const stage = values.stage;
  const cdkOut = join(PROJECT_ROOT, 'cdk.out');
  if (values.synth || !isFresh(cdkOut, stage)) {
    console.error(
      `Synthesizing ${serviceStackName(stage)} (cdk synth -q -c stage=${stage} -c pipeline:connectionArn=)…`,
    );
    synthesize(cdkOut, stage);
  }
  const fn = findFunction(readFunctions(cdkOut, stage), id);
  let eventText = await readEvent(values.event, fn.name);
  const stateDir = localStateDir();
  const local = await localResources(fn, { port: givenPort(), stateDir });
  try {
    console.error(`${fn.name} (${fn.logicalId}). ${local.source}`);
    if (eventText.includes(TOKEN_PLACEHOLDER)) {
      const token =
        values.token ??
        (await signLocalToken({
          sub: EXAMPLE_SUB,
          scope: Object.keys(SCOPES),
          port: local.issuerPort,
          stateDir,
        }));
      eventText = eventText
        .replaceAll(TOKEN_PLACEHOLDER, token)
        .replaceAll(TOKEN_EXP_PLACEHOLDER, String(expiryOf(token)));
    }
    const event: unknown = JSON.parse(eventText);
    const pool = createBundlePool(bundleOf(fn, stage, local.env));
    try {
      const requestId = crypto.randomUUID();
      console.error(`START RequestId: ${requestId} Version: $LATEST`);
      const result = await pool.invoke(event, { requestId });
      console.error(`END RequestId: ${requestId}`);
      console.error(formatReport(requestId, result.report, result.ok ? undefined : result.error));
      process.stdout.write(`${result.ok ? result.payload : JSON.stringify(result.error)}\n`);
      return result.ok ? 0 : 1;
    } finally {
      await pool.close();
    }
  } finally {
    await local.close();
  }
}

/** A JWT's `exp` (unverified: the authorizer's answer an event stands for already checked it). */
function expiryOf(token: string): number {
  const payload = token.split('.')[1];
  const exp =
    payload === undefined ? undefined : JSON.parse(Buffer.from(payload, 'base64url').toString()).exp;
  if (typeof exp !== 'number') throw new Error('--token is not a JWT with a numeric exp');
  return exp;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 2;
}
