import { describe, expect, it } from 'vitest';
import { withEarlyStops } from '#shared/http/validation.ts';
import { requestValidators, schemas } from '#shared/schemas/index.ts';
import { createAjv } from '../../scripts/ajv-instance.ts';

const compile = (early: boolean) =>
  createAjv(schemas.map((schema) => (early ? (withEarlyStops(schema) as object) : schema)));
const plain = compile(false);
const bounded = compile(true);

const pets: unknown[] = [
  { name: 'rex', photoUrls: [] },
  { name: 'rex', photoUrls: ['a'], tags: [{ id: 1, name: 't' }], category: { id: 2, name: 'c' } },
  { name: 'rex', photoUrls: new Array(21).fill('a') },
  { name: 'rex', photoUrls: new Array(20).fill('a') },
  { name: 'rex', photoUrls: [1] },
  { name: 'rex', photoUrls: [], extra: 1 },
  { name: 'rex', photoUrls: [], tags: [{ id: 1, other: 2 }] },
  { name: 'rex', photoUrls: [], tags: [{ id: 1, name: 'a', other: 2 }] },
  { name: 'rex', photoUrls: [], category: { id: 1, name: 'a', x: 1 } },
  { id: 1, name: 'rex', category: {}, photoUrls: [], tags: [], status: 'sold' },
  { id: 1, name: 'rex', category: {}, photoUrls: [], tags: [], status: 'sold', x: 1 },
  { photoUrls: 'x' },
  { name: 'rex', photoUrls: [], ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x${i}`, i])) },
  [],
];
const sends: unknown[] = [
  { toAddress: 'a', amount: 1 },
  { toAddress: 'a', amount: 1, memo: 'x' },
  { toAddress: 'a' },
  { toAddress: 'a', memo: 'x', other: 1 },
  { toAddress: 'a', amount: 1, metadata: { order: '1' } },
  { toAddress: 'a', amount: 1, metadata: { order: 1 } },
  {
    toAddress: 'a',
    amount: 1,
    metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])),
  },
  {
    toAddress: 'a',
    amount: 1,
    metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
  },
  { toAddress: 'a', amount: 1, metadata: { ['k'.repeat(41)]: 'v' } },
];

describe('withEarlyStops', () => {
  it.each([
    ...pets.map((body) => ['Pet', body] as const),
    ...sends.map((body) => ['SendRequest', body] as const),
  ])('gives a %s validator the verdict of the schema as written: %j', (id, body) => {
    expect(bounded.validate(id, body)).toBe(plain.validate(id, body));
  });

  it('leaves every request schema with a bounded number of errors: arrays capped, objects closed', () => {
    const unbounded: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.type === 'array' && typeof n.maxItems !== 'number')
        unbounded.push(`${path} (array without maxItems)`);
      // A map (no named properties) is bounded by its own maxProperties.
      const boundedMap = !n.properties && typeof n.maxProperties === 'number';
      if (n.type === 'object' && n.additionalProperties !== false && !boundedMap) {
        unbounded.push(`${path} (open object)`);
      }
      for (const [k, v] of Object.entries(n)) visit(v, `${path}/${k}`);
    };
    const ids = new Set<string>(Object.values(requestValidators));
    for (const schema of schemas.filter((s) => ids.has(s.$id))) visit(schema, schema.$id);
    expect(unbounded).toEqual([]);
  });

  it('lists a bounded number of errors for a map of many bad keys', () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, i) => [`${'k'.repeat(41)}${i}`, i]),
    );
    expect(bounded.validate('SendRequest', { toAddress: 'a', amount: 1, metadata })).toBe(false);
    expect(bounded.errors?.length ?? 0).toBeLessThan(10);
  });
});
