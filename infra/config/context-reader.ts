import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Typed access to CDK context. Values come from cdk.json, or as strings from `-c key=value`, so
 * numbers and booleans are accepted in either form; a missing or malformed value throws, naming
 * the key, before anything is synthesized.
 *
 * Read for a stage, a key set in the stage's entry of the `stages` context object
 * (`stages.<stage>.<key>`) wins over the top-level key, which is the default for every stage.
 */
export class ContextReader {
  readonly #scope: IConstruct;
  readonly #stage: string | undefined;
  readonly #overrides: Readonly<Record<string, unknown>>;
  readonly #read = new Set<string>();

  /** @param stage the stage whose `stages.<stage>` overrides apply; none when omitted */
  constructor(scope: IConstruct, stage?: string) {
    this.#scope = scope;
    this.#stage = stage;
    this.#overrides = stage === undefined ? {} : this.#stageOverrides(stage);
  }

  /** A string, optionally matching `pattern`. */
  string(key: string, pattern?: RegExp): string {
    const { name, value } = this.#lookup(key);
    return this.#string(name, value, pattern);
  }

  /** Like {@link string}, but an empty string (the way cdk.json says "not set") gives `undefined`. */
  optionalString(key: string, pattern?: RegExp): string | undefined {
    const { name, value } = this.#lookup(key);
    return value === '' ? undefined : this.#string(name, value, pattern);
  }

  /** An absolute https URL. */
  httpsUrl(key: string): string {
    const { name, value } = this.#lookup(key);
    const url = this.#string(name, value);
    if (URL.parse(url)?.protocol !== 'https:') throw this.#malformed(name, value, 'an https URL');
    return url;
  }

  /** A finite number within the bounds; `integer` rejects fractions. */
  number(key: string, bounds: { min: number; max?: number; integer?: boolean }): number {
    const { name, value: raw } = this.#lookup(key);
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
    const kind = `${bounds.integer ? 'an integer' : 'a number'} in [${bounds.min}, ${max}]`;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.#malformed(name, raw, kind);
    if ((bounds.integer && !Number.isInteger(value)) || value < bounds.min || value > max) {
      throw this.#malformed(name, raw, kind);
    }
    return value;
  }

  /** `true` or `false`, as a boolean or a string. */
  boolean(key: string): boolean {
    const { name, value } = this.#lookup(key);
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw this.#malformed(name, value, 'true or false');
  }

  /** One of `allowed`; `why` tells whoever gets it wrong what the list is about. */
  oneOf<T extends string>(key: string, allowed: readonly T[], why = ''): T {
    const { name, value } = this.#lookup(key);
    const found = allowed.find((candidate) => candidate === value);
    if (found === undefined) throw this.#malformed(name, value, `one of ${allowed.join(', ')}${why}`);
    return found;
  }

  /** One of the retention periods CloudWatch Logs offers, in days. */
  retentionDays(key: string): RetentionDays {
    const days = this.number(key, { min: 1, integer: true });
    const allowed = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number');
    const retention = allowed.find((v) => v === days);
    if (retention === undefined)
      throw this.#malformed(this.#nameOf(key), days, `one of ${allowed.join(', ')}`);
    return retention;
  }

  /**
   * Throws if the stage's overrides set a key that nothing has read: a misspelt key would
   * otherwise leave the default in force without a word.
   */
  assertOverridesRead(): void {
    const unread = Object.keys(this.#overrides).filter((key) => !this.#read.has(key));
    if (unread.length > 0) {
      throw new Error(
        `CDK context "stages.${this.#stage}" sets ${unread.map((key) => `"${key}"`).join(', ')}, which no setting reads`,
      );
    }
  }

  #stageOverrides(stage: string): Record<string, unknown> {
    let stages: unknown = this.#scope.node.tryGetContext('stages');
    if (stages === undefined) return {};
    // `-c stages='{...}'` arrives as a string.
    if (typeof stages === 'string') {
      try {
        stages = JSON.parse(stages);
      } catch {
        throw this.#malformed('stages', stages, 'an object (or its JSON) of per-stage objects');
      }
    }
    if (!isRecord(stages)) throw this.#malformed('stages', stages, 'an object of per-stage objects');
    const overrides = stages[stage];
    if (overrides === undefined) return {};
    if (!isRecord(overrides))
      throw this.#malformed(`stages.${stage}`, overrides, 'an object of context keys');
    return overrides;
  }

  #nameOf(key: string): string {
    return Object.hasOwn(this.#overrides, key) ? `stages.${this.#stage}.${key}` : key;
  }

  #lookup(key: string): { name: string; value: unknown } {
    this.#read.add(key);
    const name = this.#nameOf(key);
    if (name !== key) return { name, value: this.#overrides[key] };
    const value: unknown = this.#scope.node.tryGetContext(key);
    if (value === undefined) throw new Error(`CDK context "${key}" is missing (cdk.json sets every key)`);
    return { name, value };
  }

  #string(name: string, value: unknown, pattern?: RegExp): string {
    if (typeof value !== 'string' || value === '') throw this.#malformed(name, value, 'a non-empty string');
    if (pattern && !pattern.test(value)) throw this.#malformed(name, value, `a string matching ${pattern}`);
    return value;
  }

  #malformed(name: string, value: unknown, expected: string): Error {
    return new Error(`CDK context "${name}" must be ${expected}, got ${JSON.stringify(value)}`);
  }
}
