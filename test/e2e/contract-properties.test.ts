/**
 * Requests generated from the OpenAPI document (fast-check): a request the document allows is
 * never refused as invalid (400, 422 validation-failed) nor answered 5xx; one it forbids gets a
 * 4xx. Every answer also goes through the contract check of `call`. Bounded: a few dozen runs
 * per property, each stopped after a time budget (fast-check then reports what ran).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uniqueSub } from '../support/events.ts';
import { type CallResult, call, tokenFor } from './http.ts';
import { operationSchema, resolve, type Schema, valid } from './schema-arbitrary.ts';

const RUNS = { numRuns: 25, interruptAfterTimeLimit: 15_000 } as const;

const petBody = operationSchema('/api/v3/pet', 'post', { body: true });
const petId = operationSchema('/api/v3/pet/{petId}', 'get', { parameter: 'petId' });
const sendBody = operationSchema('/api/wallet/send', 'post', { body: true });
const idempotencyKey = operationSchema('/api/wallet/send', 'post', { parameter: 'Idempotency-Key' });

/** Not refused as a malformed or invalid request, and no server fault. */
function expectAcceptedAsValid(result: CallResult): void {
  expect(result.status, result.text).toBeLessThan(500);
  expect(result.status, result.text).not.toBe(400);
  const type = (result.json as { type?: string } | undefined)?.type ?? '';
  expect(type, result.text).not.toMatch(/validation-failed|invalid-parameter|malformed-body/);
}

function expectClientError(result: CallResult): void {
  expect(result.status, result.text).toBeGreaterThanOrEqual(400);
  expect(result.status, result.text).toBeLessThan(500);
}

const petProperties = resolve(petBody).properties as Record<string, Schema>;

describe('requests the document allows', () => {
  it('addPet: any valid pet is stored (or its id is taken), never refused as invalid', async () => {
    const token = await tokenFor('write:pets');
    await fc.assert(
      fc.asyncProperty(valid(petBody), async (pet) => {
        const result = await call('POST', '/api/v3/pet', { token, json: pet });
        expectAcceptedAsValid(result);
        expect([200, 409]).toContain(result.status);
      }),
      RUNS,
    );
  });

  it('getPetById: the documented bounds themselves are looked up, one past them refused', async () => {
    const token = await tokenFor('read:pets');
    const { minimum, maximum } = resolve(petId) as { minimum: number; maximum: number };
    for (const id of [minimum, maximum])
      expectAcceptedAsValid(await call('GET', `/api/v3/pet/${id}`, { token }));
    for (const id of [BigInt(minimum) - 1n, BigInt(maximum) + 1n]) {
      expect((await call('GET', `/api/v3/pet/${id}`, { token })).status).toBe(400);
    }
  });

  it('getPetById: any id within the documented bounds is looked up (200 or 404), never refused', async () => {
    const token = await tokenFor('read:pets');
    await fc.assert(
      fc.asyncProperty(valid(petId), async (id) => {
        const result = await call('GET', `/api/v3/pet/${id}`, { token });
        expectAcceptedAsValid(result);
        expect([200, 404]).toContain(result.status);
      }),
      RUNS,
    );
  });

  it('sendMoney: any valid transfer and key is judged on the money (funds, recipient), never refused as invalid', async () => {
    const sub = uniqueSub('prop');
    const token = await tokenFor('write:wallet', { sub });
    await fc.assert(
      fc.asyncProperty(valid(sendBody), fc.option(valid(idempotencyKey)), async (body, key) => {
        fc.pre((body as { toAddress: string }).toAddress !== sub);
        const result = await call('POST', '/api/wallet/send', {
          token,
          json: body,
          headers: key === null ? {} : { 'idempotency-key': key as string },
        });
        expectAcceptedAsValid(result);
      }),
      RUNS,
    );
  });
});

describe('requests the document forbids', () => {
  const photoUrls = petProperties.photoUrls as Schema;
  const nameSchema = petProperties.name as Schema;
  /** One way to break a valid pet, each against a rule the document states. */
  const broken = fc.oneof(
    fc.constant((pet: Record<string, unknown>) => ({ ...pet, nickname: 'x' })),
    fc.constant(({ name: _name, ...pet }: Record<string, unknown>) => pet),
    fc.constant((pet: Record<string, unknown>) => ({ ...pet, name: 42 })),
    fc.constant((pet: Record<string, unknown>) => ({
      ...pet,
      name: '🐈'.repeat((nameSchema.maxLength as number) + 1),
    })),
    fc.constant((pet: Record<string, unknown>) => ({
      ...pet,
      photoUrls: Array.from({ length: (photoUrls.maxItems as number) + 1 }, () => 'u'),
    })),
    fc.constant((pet: Record<string, unknown>) => ({ ...pet, status: 'lost' })),
  );

  it('addPet: a pet breaking one documented rule gets a 4xx', async () => {
    const token = await tokenFor('write:pets');
    await fc.assert(
      fc.asyncProperty(valid(petBody), broken, async (pet, breakIt) => {
        expectClientError(
          await call('POST', '/api/v3/pet', { token, json: breakIt(pet as Record<string, unknown>) }),
        );
      }),
      RUNS,
    );
  });

  it('getPetById: an id outside the documented bounds, or no integer, gets a 4xx', async () => {
    const token = await tokenFor('read:pets');
    const bound = BigInt(resolve(petId).maximum as number);
    const outside = fc.oneof(
      fc.bigInt({ min: bound + 1n, max: bound * 1000n }).map(String),
      fc.bigInt({ min: -bound * 1000n, max: -bound - 1n }).map(String),
      fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }).map(String),
      fc.stringMatching(/^[a-z]{1,10}$/),
    );
    await fc.assert(
      fc.asyncProperty(outside, async (id) => {
        expectClientError(await call('GET', `/api/v3/pet/${encodeURIComponent(id)}`, { token }));
      }),
      RUNS,
    );
  });

  it('sendMoney: an amount over the maximum, too precise or not positive gets a 4xx', async () => {
    const token = await tokenFor('write:wallet', { sub: uniqueSub('prop') });
    const amount = (resolve(sendBody).properties as Record<string, Schema>).amount as Schema;
    const decimals = amount['x-decimals'] as number;
    const badAmount = fc.oneof(
      fc.integer({ min: 1, max: 1000 }).map((n) => (amount.maximum as number) + n),
      fc.integer({ min: 1, max: 9 }).map((d) => JSON.rawJSON(`1.${'0'.repeat(decimals)}${d}`)),
      fc.integer({ min: -1000, max: 0 }),
    );
    await fc.assert(
      fc.asyncProperty(badAmount, async (bad) => {
        expectClientError(
          await call('POST', '/api/wallet/send', { token, json: { toAddress: 'someone', amount: bad } }),
        );
      }),
      RUNS,
    );
  });
});
