/**
 * Which wallets table a command of `scripts/` works on (`wallet:fund`, `wallet:audit`,
 * `wallet:claim-skeletons`): a deployed one named by `--table` (with `--region` or AWS_REGION, and
 * `--endpoint` for another DynamoDB), or else the running local stack's, chosen as every local
 * command chooses it (`chooseRunningStack`: PORT, or the only one running).
 */
import { chooseRunningStack, describeChoice } from '#infra/local/stack-record.ts';
import { tables } from '#shared/dynamodb/tables.ts';

/** The `parseArgs` options of the choice, for a command to spread into its own. */
export const TABLE_OPTIONS = {
  table: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
} as const;

export interface WalletsTable {
  readonly tableName: string;
  /** The DynamoDB to reach it at; the SDK's default (AWS) when absent. */
  readonly endpoint?: string | undefined;
}

/**
 * The table `values` (parsed with {@link TABLE_OPTIONS}) name. `process.env` then holds what a
 * function of that place would read: AWS_REGION for a deployed table, the stack's variables for a
 * local one. Says on stderr which stack `doing` uses; `fail` ends the command with usage.
 */
export async function walletsTableOf(
  values: {
    readonly table?: string | undefined;
    readonly region?: string | undefined;
    readonly endpoint?: string | undefined;
  },
  { doing, fail }: { readonly doing: string; readonly fail: (message: string) => never },
): Promise<WalletsTable> {
  if (values.table) {
    const region = values.region ?? process.env.AWS_REGION;
    if (!region) return fail('--region (or AWS_REGION) is required with --table');
    process.env.AWS_REGION = region;
    return { tableName: values.table, endpoint: values.endpoint };
  }
  const choice = await chooseRunningStack();
  if (!choice.stack) return fail(`${choice.problem} Or pass --table for a deployed table.`);
  process.stderr.write(`${doing} ${describeChoice(choice)}\n`);
  Object.assign(process.env, choice.stack.env);
  return {
    tableName: choice.stack.env[tables.wallets.envVar] as string,
    endpoint: choice.stack.dynamodbEndpoint,
  };
}
