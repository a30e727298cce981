/**
 * `npm run wallet:claim-skeletons`: once, on a table whose wallets were opened before openings
 * claimed their address's UTS #39 confusable skeleton (issue 45.4), claims each wallet's skeleton,
 * the wallet opened first keeping a skeleton two share (shared/wallet/dynamodb/skeleton-claims.ts).
 * Safe to run again and beside traffic. Prints a one-line JSON summary, then one line per wallet
 * whose address looks like an older one's: it stays open, and `npm run wallet:audit` names it
 * until an operator settles the pair.
 *
 * Exit codes: 0 every wallet's skeleton is its own; 1 lookalikes were found (each named); 2
 * invalid arguments, or the table could not be read.
 *
 * By default it works on the local stack that `npm start` runs on PORT (default 3000). With
 * `--table <name> [--region <r>] [--endpoint <url>]` on a deployed table, with the default AWS
 * credentials.
 */
import { parseArgs } from 'node:util';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { claimSkeletons } from '#shared/wallet/dynamodb/skeleton-claims.ts';
import { TABLE_OPTIONS, walletsTableOf } from './wallets-table.ts';

const USAGE = `Usage: npm run wallet:claim-skeletons -- [--table <table> [--region <region>] [--endpoint <url>]]`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      options: TABLE_OPTIONS,
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const { tableName, endpoint } = await walletsTableOf(values, {
    doing: 'wallet:claim-skeletons: claiming in',
    fail,
  });
  let report: Awaited<ReturnType<typeof claimSkeletons>>;
  try {
    report = await claimSkeletons({ client: createDocumentClient({ endpoint }), tableName });
  } catch (error) {
    process.stderr.write(
      `wallet:claim-skeletons could not finish on ${tableName} (run it again): ${(error as Error).name}: ${(error as Error).message}\n`,
    );
    process.exit(2);
  }
  const { lookalikes, ...summary } = report;
  process.stdout.write(`${JSON.stringify({ ...summary, lookalikes: lookalikes.length })}\n`);
  for (const pair of lookalikes) process.stdout.write(`${JSON.stringify(pair)}\n`);
  process.exit(lookalikes.length === 0 ? 0 : 1);
}

await main();
