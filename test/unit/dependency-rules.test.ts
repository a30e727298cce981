import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
  readonly cycle?: readonly unknown[];
}

/** Writes a tree of source files (path → content) into a folder of its own. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dependency-rules-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  made.push(dir);
  return dir;
}
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The project's own rules, run by its own checker over `dir`, as `npm run depcruise` runs them. */
async function violations(dir: string): Promise<Violation[]> {
  const run = promisify(execFile)(
    DEPCRUISE,
    ['shared', 'functions', 'infra', '--config', CONFIG, '--output-type', 'json'],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  );
  // A violation exits non-zero, with the report on stdout all the same.
  const { stdout } = await run.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('the dependency rules npm test checks (.dependency-cruiser.cjs)', () => {
  it('pass a tree that keeps them: a use case on its port, an adapter implementing it, a root wiring both', async () => {
    const dir = tree({
      'shared/wallet/send/ports.ts': 'export interface TransferStore { commit(): Promise<void> }\n',
      'shared/wallet/send/send-money.ts':
        "import type { TransferStore } from './ports.ts';\nexport const send = (s: TransferStore) => s.commit();\n",
      'shared/wallet/dynamodb/transfer-store.ts':
        "import type { TransferStore } from '../send/ports.ts';\nexport const store: TransferStore = { commit: async () => {} };\n",
      'functions/send-money/handler.ts':
        "import { store } from '../../shared/wallet/dynamodb/transfer-store.ts';\nimport { send } from '../../shared/wallet/send/send-money.ts';\nexport const handler = () => send(store);\n",
      'infra/local/gateway.ts':
        "import { handler } from '../../functions/send-money/handler.ts';\nexport const h = handler;\n",
    });
    expect(await violations(dir)).toEqual([]);
  });

  it('fail on each broken rule, naming the file that breaks it', async () => {
    const dir = tree({
      // A cycle made only of type imports.
      'shared/wallet/dynamodb/consistent-read.ts':
        "import type { Access } from './ledger-commit.ts';\nexport const read = (a: Access) => a;\n",
      'shared/wallet/dynamodb/ledger-commit.ts':
        "import type { read } from './consistent-read.ts';\nexport interface Access { r?: typeof read }\n",
      // shared/ importing a function.
      'shared/wallet/model/money.ts':
        "import type { handler } from '../../../functions/pay/handler.ts';\nexport type H = typeof handler;\n",
      'functions/pay/handler.ts': 'export const handler = () => 1;\n',
      // A use case importing an adapter, for a type only.
      'shared/wallet/balance/get-balance.ts':
        "import type { Row } from '../dynamodb/balance-store.ts';\nexport const f = (r: Row) => r;\n",
      'shared/wallet/dynamodb/balance-store.ts': 'export interface Row { n: number }\n',
      // Shipped code importing the local stand-in.
      'functions/fund/handler.ts':
        "import { local } from '../../infra/local/stack.ts';\nexport const h = local;\n",
      'infra/local/stack.ts': 'export const local = 1;\n',
    });
    const found = await violations(dir);
    const byRule = (name: string) => found.filter((v) => v.rule.name === name).map((v) => v.from);
    const cycles = found.filter((v) => v.rule.name === 'no-circular');
    expect(cycles).toHaveLength(1);
    expect(
      [cycles[0]?.from, ...(cycles[0]?.cycle ?? []).map((step) => (step as { name: string }).name)].sort(),
    ).toEqual([
      'shared/wallet/dynamodb/consistent-read.ts',
      'shared/wallet/dynamodb/consistent-read.ts',
      'shared/wallet/dynamodb/ledger-commit.ts',
    ]);
    expect(byRule('shared-not-to-functions-or-infra')).toEqual(['shared/wallet/model/money.ts']);
    expect(byRule('use-case-not-to-adapter')).toEqual(['shared/wallet/balance/get-balance.ts']);
    expect(byRule('local-only-stays-local')).toEqual(['functions/fund/handler.ts']);
    expect(new Set(found.map((v) => v.rule.name)).size).toBe(4);
  });
});
