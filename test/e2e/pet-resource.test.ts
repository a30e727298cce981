import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, tokenFor, uniquePetId } from './http.ts';

/**
 * The pet resource's changes and searches through the local gateway: real authorizer, real
 * handlers, DynamoDB Local behind the conflict proxy; every answer checked against the served
 * OpenAPI document (`call`). The rules behind each: test/unit, test/integration.
 */

let token: string;
let reader: string;

beforeAll(async () => {
  token = await tokenFor('write:pets read:pets');
  reader = await tokenFor('read:pets');
});

const tagOfTest = () => `e2e-${uniquePetId()}`;

describe('a pet, changed and removed through the gateway', () => {
  it('add, replace with If-Match, form update, delete: each answer with its ETag, a stale one 412', async () => {
    const id = uniquePetId();
    const tag = tagOfTest();
    const pet = { id, name: 'doggie', photoUrls: [], tags: [{ id: 1, name: tag }], status: 'available' };
    const added = await call('POST', '/api/v3/pet', { token, json: pet });
    expect(added.status).toBe(200);
    const first = added.headers.get('etag') as string;
    expect(first).toMatch(/^"[\w-]{16}"$/);

    const read = await call('GET', `/api/v3/pet/${id}`, { token: reader });
    expect(read.headers.get('etag')).toBe(first);

    const replaced = await call('PUT', '/api/v3/pet', {
      token,
      json: { ...pet, status: 'pending' },
      headers: { 'if-match': first },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toEqual({ ...pet, status: 'pending' });
    const second = replaced.headers.get('etag') as string;
    expect(second).not.toBe(first);

    const stale = await call('PUT', '/api/v3/pet', { token, json: pet, headers: { 'if-match': first } });
    expect(expectProblem(stale, 412).type).toBe('urn:problem-type:wallet-catalog:precondition-failed');

    const formed = await call('POST', `/api/v3/pet/${id}?name=rex&status=sold`, {
      token,
      headers: { 'if-match': second },
    });
    expect(formed.status).toBe(200);
    expect(formed.json).toEqual({ ...pet, name: 'rex', status: 'sold' });

    const found = await call('GET', `/api/v3/pet/findByTags?tags=${tag}`, { token: reader });
    expect(found.json).toEqual([{ ...pet, name: 'rex', status: 'sold' }]);
    // Several tags as the Petstore's description has clients send them: comma-separated.
    const commas = await call('GET', `/api/v3/pet/findByTags?tags=other-${tag},${tag}`, { token: reader });
    expect(commas.json).toEqual(found.json);

    const removed = await call('DELETE', `/api/v3/pet/${id}`, { token, headers: { api_key: 'ignored' } });
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ ...pet, name: 'rex', status: 'sold' });
    expectProblem(await call('DELETE', `/api/v3/pet/${id}`, { token }), 404);
    expect((await call('GET', `/api/v3/pet/findByTags?tags=${tag}`, { token: reader })).json).toEqual([]);
  });

  it('refuses changes without write:pets (403), and a petId past int64 (400)', async () => {
    expectProblem(await call('DELETE', `/api/v3/pet/${uniquePetId()}`, { token: reader }), 403);
    expectProblem(await call('POST', `/api/v3/pet/9223372036854775808?name=x`, { token }), 400);
  });
});

describe('searches through the gateway', () => {
  it('pages findByTags by Link to the end, each pet once', async () => {
    const [a, b] = [tagOfTest(), tagOfTest()];
    const ids = [uniquePetId(), uniquePetId(), uniquePetId()];
    for (const [i, id] of ids.entries()) {
      const tags = i === 0 ? [{ name: a }, { name: b }] : [{ name: i === 1 ? a : b }];
      expect(
        (await call('POST', '/api/v3/pet', { token, json: { id, name: `p${i}`, photoUrls: [], tags } }))
          .status,
      ).toBe(200);
    }
    const seen: number[] = [];
    let next: string | undefined = `/api/v3/pet/findByTags?tags=${a}&tags=${b}&limit=1`;
    while (next !== undefined) {
      const page = await call('GET', next, { token: reader });
      expect(page.status).toBe(200);
      seen.push(...(page.json as { id: number }[]).map((pet) => pet.id));
      const link = page.headers.get('link');
      next =
        link === null ? undefined : `/api/v3/pet/findByTags${/^<(\?[^>]+)>; rel="next"$/.exec(link)?.[1]}`;
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it('answers findByStatus with a Pet[], and a precise 400 for an unknown status or a tampered cursor', async () => {
    const page = await call('GET', '/api/v3/pet/findByStatus?status=available&limit=2', { token: reader });
    expect(page.status).toBe(200);
    expect(Array.isArray(page.json)).toBe(true);
    const several = await call('GET', '/api/v3/pet/findByStatus?status=pending,sold&limit=5', {
      token: reader,
    });
    expect(several.status).toBe(200);
    const statuses = (several.json as { status?: string }[]).map((pet) => pet.status);
    expect(statuses.filter((status) => status !== 'pending' && status !== 'sold')).toEqual([]);
    expect(
      expectProblem(await call('GET', '/api/v3/pet/findByStatus?status=lost', { token: reader }), 400).detail,
    ).toContain('status');
    const tampered = await call('GET', '/api/v3/pet/findByStatus?status=sold&cursor=WzAsbnVsbCwiYSIsImIiXQ', {
      token: reader,
    });
    expect(expectProblem(tampered, 400).detail).toContain('cursor');
  });
});
