/** What one `npm run bench` measured: the input of the budgets, the report and the cost model. */
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import type { Bundle } from './build.ts';
import type { ColdInit } from './cold.ts';
import type { RouteEndToEnd } from './e2e.ts';
import type { HotWallet } from './hot-wallet.ts';
import type { WarmOverhead } from './warm.ts';
import type { WebhookLatency } from './webhooks.ts';

export interface Settings {
  readonly coldRounds: number;
  readonly warmBatches: number;
  readonly warmBatchSize: number;
  readonly warmPasses: number;
  readonly concurrency: number;
  readonly warmUpRequests: number;
  readonly e2eRounds: number;
  readonly e2eBatchRequests: number;
  /** Rounds of the hot-wallet scenario (each: 100 clients × 5 payments into one wallet, and spread). */
  readonly hotRounds: number;
  /** At most this many more sets of samples for a check whose interval straddles its limit. */
  readonly extraSets: number;
  /** The webhook scenario: payers, each paying the one merchant this many times. */
  readonly webhookClients: number;
  readonly webhookPayments: number;
}

/**
 * Everything a run measured. A new measurement (a scenario such as the hot wallet) adds its field
 * here, its call in `run.ts` and its lines in `BUDGETS` of `budgets.ts`.
 */
export interface Results {
  readonly bundles: readonly Bundle[];
  readonly cold: readonly ColdInit[];
  readonly warm: readonly WarmOverhead[];
  readonly endToEnd: readonly RouteEndToEnd[];
  readonly hotWallet: HotWallet;
  readonly webhooks: WebhookLatency;
  readonly settings: Settings;
  readonly machine: Machine;
  readonly startedAt: Date;
  readonly durationS: number;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  /** 1-minute load averages when the run started and ended: how shared the machine was. */
  readonly loadAtStart: number;
  loadAtEnd?: number;
}

/** The machine the run is on, with its load right now. */
export function describeMachine(): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    loadAtStart: loadavg()[0] ?? 0,
  };
}
