/**
 * `npm run wallet:fund -- --address <a> --amount <n> [--deposit-id <id>]`: credits a wallet
 * (opening it if need be) and records the deposit, once per deposit id: a re-run with the same
 * id, after a crash or a lost answer, credits nothing more. Without `--deposit-id` a fresh one is
 * printed before anything is written, so a run that fails can be re-run safely with it.
 *
 * It prints the deposit as JSON, amounts as exact decimal numbers as the API writes them, with
 * its `transferId`: the id the history shows and `GET /api/wallet/transfers/{transferId}` finds,
 * which is the deposit id itself unless an operator's `--deposit-id` is no UUID.
 *
 * Exit codes: 0 funded (or already funded by this deposit id); 1 failed, outcome unknown (re-run
 * with the same deposit id); 2 invalid arguments; 3 refused, nothing written (the balance would
 * exceed the most a wallet holds, the deposit id was used for another deposit or movement, or no
 * wallet is open at the address and none may open because it looks like another wallet's address).
 *
 * By default it funds the local stack that `npm start` runs: the one on PORT when set, else the
 * only one running (found through the records in the local state directory), and says which. With
 * `--table <name> [--region <r>] [--endpoint <url>]` it funds a deployed table instead, with the
 * default AWS credentials. No HTTP route creates money: this is an operator's tool.
 */

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { defaultServiceSettings, walletEnvironment } from '#infra/environment.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { validateAddress } from '#shared/schemas/validators.generated.js';
import { type DepositOutcome, makeRecordDeposit } from '#shared/wallet/deposit/record-deposit.ts';
import { depositTransferId } from '#shared/wallet/deposit/transfer-id.ts';
import { createBalanceStore } from '#shared/wallet/dynamodb/balance-store.ts';
import { createDepositStore } from '#shared/wallet/dynamodb/deposit-store.ts';
import {
  formatMinor,
  MAX_AMOUNT_TEXT_LENGTH,
  MAX_BALANCE_MINOR,
  moneyJson,
  parseAmount,
} from '#shared/wallet/model/money.ts';
import { loadWalletSettings } from '#shared/wallet/model/settings.ts';
import { TABLE_OPTIONS, walletsTableOf } from './wallets-table.ts';

const USAGE = `Usage: npm run wallet:fund -- --address <address> --amount <decimal> [--deposit-id <id>]
       [--table <deployed table> [--region <region>] [--endpoint <url>]]
       [--currency <ISO code> --decimals <n>]   (deployed tables; default ${defaultServiceSettings.currency}, ${defaultServiceSettings.currencyDecimals})`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

/** Nothing was written, and a re-run would be refused the same way. */
function refuse(message: string): never {
  process.stderr.write(`wallet:fund refused, nothing was written: ${message}\n`);
  process.exit(3);
}

/** Same rule as an Idempotency-Key: 1 to 255 visible ASCII characters. */
const DEPOSIT_ID = /^[\x21-\x7E]{1,255}$/;

async function main(): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        address: { type: 'string' },
        amount: { type: 'string' },
        'deposit-id': { type: 'string' },
        ...TABLE_OPTIONS,
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
  // The address rule every token's sub and every toAddress passes: no lookalike wallet by funding.
  if (!validateAddress(address))
    fail('--address is not a valid wallet address (docs/decisions/address-profile.md)');
  const givenDepositId = values['deposit-id'];
  if (givenDepositId !== undefined && !DEPOSIT_ID.test(givenDepositId)) {
    fail('--deposit-id must be 1 to 255 visible ASCII characters');
  }

  const { tableName, endpoint } = await walletsTableOf(values, { doing: 'wallet:fund: funding in', fail });
  if (values.table) {
    // A deployed table: the settings its functions are given, with the currency named here.
    Object.assign(
      process.env,
      walletEnvironment({
        ...defaultServiceSettings,
        ...(values.currency ? { currency: values.currency } : {}),
        ...(values.decimals ? { currencyDecimals: Number(values.decimals) } : {}),
      }),
    );
  }

  // The environment a function of that stack gets, read through the same getters.
  const settings = loadWalletSettings();
  const ledger = { client: createDocumentClient({ endpoint }), tableName };
  const { readWallet } = createBalanceStore(ledger);
  const recordDeposit = makeRecordDeposit({
    deposits: createDepositStore(ledger),
    ids: { next: randomUUID },
  });
  const { currency } = settings;
  const parsed = parseAmount(amount, currency, MAX_BALANCE_MINOR);
  if ('problem' in parsed) {
    fail(
      `--amount ${amount.slice(0, 40)} is not a valid ${currency.code} amount (${parsed.problem}; ${
        parsed.problem === 'too-long'
          ? `at most ${MAX_AMOUNT_TEXT_LENGTH} characters`
          : `at most ${formatMinor(MAX_BALANCE_MINOR, currency)}`
      })`,
    );
  }
  const depositId = givenDepositId ?? randomUUID();
  const transferId = depositTransferId(depositId);
  if (givenDepositId === undefined) {
    // Before the write: whatever happens next, the operator can re-run with this id safely.
    process.stderr.write(
      `deposit id ${depositId}, also its transferId in the history (re-run with --deposit-id ${depositId} to retry safely)\n`,
    );
  }
  const deposit = {
    depositId,
    address,
    amountMinor: parsed.minor,
    currency: currency.code,
    createdAt: new Date().toISOString(),
  };
  let outcome: DepositOutcome;
  try {
    outcome = await recordDeposit(deposit);
  } catch (error) {
    process.stderr.write(
      `wallet:fund failed, the deposit may or may not be recorded (${String((error as Error).message).slice(0, 200)}): re-run with --deposit-id ${depositId}\n`,
    );
    process.exit(1);
  }
  if (outcome.kind === 'id-taken') {
    refuse(`deposit id ${depositId} is the id of another movement: choose another`);
  }
  if (outcome.kind === 'balance-limit') {
    refuse(
      `the balance of ${address} would exceed ${formatMinor(MAX_BALANCE_MINOR, currency)} ${currency.code}, the most a wallet holds`,
    );
  }
  if (outcome.kind === 'not-positive') refuse('a deposit credits the wallet: its amount must be positive');
  if (outcome.kind === 'lookalike') {
    refuse(
      `${JSON.stringify(address)} looks like the address of the wallet ${JSON.stringify(outcome.holder)} (the same UTS #39 confusable skeleton), so no wallet may open at it; a payer could not tell the two apart`,
    );
  }
  // A retry inside this run whose first answer was lost finds its own record: that is `recorded`.
  const earlier = outcome.kind === 'already-recorded' && outcome.deposit.createdAt !== deposit.createdAt;
  if (outcome.kind === 'already-recorded') {
    const first = outcome.deposit;
    if (first.address !== address || first.amountMinor !== parsed.minor || first.currency !== currency.code) {
      refuse(
        `deposit id ${depositId} was used on ${first.createdAt} for another deposit (${formatMinor(first.amountMinor, currency)} ${first.currency} to ${first.address})`,
      );
    }
  }
  // Amounts as the API writes them: exact decimal JSON numbers, never strings or floats.
  let balance: unknown = null;
  try {
    const wallet = await readWallet(address);
    balance = moneyJson(wallet?.balanceMinor ?? 0n, currency);
  } catch (error) {
    process.stderr.write(
      `the deposit is recorded, but reading the balance failed (${(error as Error).name})\n`,
    );
  }
  process.stdout.write(
    `${JSON.stringify({
      // The id the history and GET /api/wallet/transfers/{transferId} show; a deposit id of the
      // operator's that is no UUID is printed beside it.
      transferId,
      ...(transferId === depositId ? {} : { depositId }),
      address,
      amount: moneyJson(parsed.minor, currency),
      currency: currency.code,
      balance,
      ...(earlier ? { alreadyRecorded: true } : {}),
    })}\n`,
  );
}

await main();
