/**
 * `npm run token -- --sub <id> --scope "<scopes>" [--ttl <seconds>]`: prints an access token of
 * the local issuer, and nothing else, on stdout, so that `TOKEN=$(npm run -s token -- ...)` works.
 * The issuer follows `PORT`, as the local gateway does: `PORT=4000 npm run token` matches
 * `PORT=4000 npm start`.
 */
import { runTokenCommand } from './token-command.ts';

process.exitCode = await runTokenCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
