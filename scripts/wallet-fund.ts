/**
 * `npm run wallet:fund -- --address <a> --amount <n>`: credits a wallet and records the deposit.
 *
 * By default it funds the local stack that `npm start` runs on PORT (default 3000), found through
 * its record in the local state directory, like `npm run token` finds the local issuer. With
 * `--table <name> [--region <r>] [--endpoint <url>]` it funds a deployed table instead, with the
 * default AWS credentials. No HTTP route creates money: this is an operator's tool.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { defaultServiceSettings, walletEnvironment } from '#infra/environment.ts';
import { defaultPort } from '#infra/local/issuer.ts';
import { readRunningStack } from '#infra/local/stack-record.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { formatMinor, parseAmount } from '#shared/wallet/money.ts';

const USAGE = `Usage: npm run wallet:fund -- --address <address> --amount <decimal>
       [--table <deployed table> [--region <region>] [--endpoint <url>]]
       [--currency <ISO code> --decimals <n>]   (deployed tables; default ${defaultServiceSettings.currency}, ${defaultServiceSettings.currencyDecimals})`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        address: { type: 'string' },
        amount: { type: 'string' },
        table: { type: 'string' },
        region: { type: 'string' },
        endpoint: { type: 'string' },
        currency: { type: 'string' },
        decimals: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const { address, amount } = values;
  if (!address || !amount) fail('--address and --amount are required');

  if (values.table) {
    const region = values.region ?? process.env.AWS_REGION;
    if (!region) fail('--region (or AWS_REGION) is required with --table');
    const settings = {
      ...defaultServiceSettings,
      ...(values.currency ? { currency: values.currency } : {}),
      ...(values.decimals ? { currencyDecimals: Number(values.decimals) } : {}),
    };
    Object.assign(process.env, walletEnvironment(settings), {
      AWS_REGION: region,
      [tables.wallets.envVar]: values.table,
      ...(values.endpoint ? { DYNAMODB_ENDPOINT: values.endpoint } : {}),
    });
  } else {
    const stack = await readRunningStack(defaultPort());
    if (!stack) {
      fail(
        `No local stack runs on port ${defaultPort()}: start one with \`npm start\`, or pass --table for a deployed table`,
      );
    }
    Object.assign(process.env, stack.env);
  }

  // Loaded only now: the repository and settings read their environment at load, like a function.
  const { loadWalletSettings } = await import('#shared/wallet/settings.ts');
  const { readWallet, recordDeposit } = await import('#shared/wallet/wallet-repository.ts');
  const settings = loadWalletSettings();
  const parsed = parseAmount(amount, settings.currency, Number.MAX_SAFE_INTEGER);
  if ('problem' in parsed) {
    fail(`--amount ${amount} is not a valid ${settings.currency.code} amount (${parsed.problem})`);
  }
  const depositId = randomUUID();
  await recordDeposit({
    depositId,
    address,
    amountMinor: parsed.minor,
    currency: settings.currency.code,
    createdAt: new Date().toISOString(),
  });
  const wallet = await readWallet(address);
  const balance = formatMinor(wallet?.balanceMinor ?? 0, settings.currency);
  process.stdout.write(
    `${JSON.stringify({ depositId, address, amount: formatMinor(parsed.minor, settings.currency), currency: settings.currency.code, balance })}\n`,
  );
}

await main();
