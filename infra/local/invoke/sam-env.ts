/**
 * `npx node infra/local/invoke/sam-env.ts <stage> <out dir>`: what `sam local invoke` needs to run the
 * authorizer against the local issuer of a running `npm start`: an `--env-vars` file
 * (`<out>/sam-env.json`, by logical id) pointing `AUTH_*` at it, reached from the container
 * through `host.docker.internal`, and `<out>/sam-authorizer-event.json` with a fresh token.
 * SAM only overrides variables the template declares, and `DYNAMODB_ENDPOINT` is not one: under
 * SAM the table functions use real DynamoDB, with your credentials and the deployed table names.
 * Exits 3 when no local stack runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPES } from '#shared/routes.ts';
import { signLocalToken } from '../issuer.ts';
import { chooseRunningStack, describeChoice } from '../stack-record.ts';
import { localStateDir } from '../state.ts';
import { EXAMPLE_SUB, TOKEN_PLACEHOLDER } from './events.ts';
import { findFunction, readFunctions } from './template.ts';

const [stage = 'dev', out = 'cdk.out'] = process.argv.slice(2);
const choice = await chooseRunningStack({ stateDir: localStateDir() });
if (!choice.stack) {
  console.error(choice.problem);
  process.exit(3);
}
console.error(`sam-env: for ${describeChoice(choice)}`);
const { stack: running, port } = choice;
const fromContainer = (url: string) => url.replace('://127.0.0.1:', '://host.docker.internal:');
const authorizer = findFunction(readFunctions(out, stage), 'authorizer');
const env = {
  [authorizer.logicalId]: {
    AUTH_ISSUER: running.env.AUTH_ISSUER,
    AUTH_AUDIENCE: running.env.AUTH_AUDIENCE,
    AUTH_JWKS_URL: fromContainer(running.env.AUTH_JWKS_URL ?? ''),
    ...(running.env.AUTH_REQUIRE_LOW_S === undefined
      ? {}
      : { AUTH_REQUIRE_LOW_S: running.env.AUTH_REQUIRE_LOW_S }),
  },
};
writeFileSync(join(out, 'sam-env.json'), `${JSON.stringify(env, null, 2)}\n`);
const token = await signLocalToken({ sub: EXAMPLE_SUB, scope: Object.keys(SCOPES), port });
const event = readFileSync(join('events', 'authorizer.json'), 'utf8').replaceAll(TOKEN_PLACEHOLDER, token);
writeFileSync(join(out, 'sam-authorizer-event.json'), event);
console.log(authorizer.logicalId);
