import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { CREDIT_RECORD_FILTER } from '#infra/credit-poster-settings.ts';
import { eventFileName, exampleEvents, TOKEN_PLACEHOLDER } from '#infra/local/invoke/events.ts';
import { matchesFilter } from '#infra/local/stream-records.ts';
import { operationContracts } from '#shared/openapi-operations.ts';
import { routes } from '#shared/routes.ts';
import * as validators from '#shared/schemas/validators.generated.js';

const dir = join(PROJECT_ROOT, 'events');

describe('the example events of npm run invoke', () => {
  it('are committed exactly as the route table generates them (npm run generate:events)', () => {
    const generated = exampleEvents();
    const committed = readdirSync(dir).filter((file) => file.endsWith('.json'));
    expect(committed.sort()).toEqual(Object.keys(generated).sort());
    for (const [file, event] of Object.entries(generated)) {
      expect(JSON.parse(readFileSync(join(dir, file), 'utf8')), file).toEqual(event);
    }
  });

  it('cover every route and the authorizer, with a token placeholder wherever a token is sent', () => {
    const files = Object.keys(exampleEvents());
    expect(files).toEqual(
      expect.arrayContaining(['authorizer.json', ...routes.map((route) => eventFileName(route.operationId))]),
    );
    expect(files).toContain('get-balance.json');
    const events = exampleEvents() as Record<string, { headers?: Record<string, string> }>;
    for (const route of routes) {
      const authorization = events[eventFileName(route.operationId)]?.headers?.Authorization;
      expect(authorization, route.operationId).toBe(
        route.scopes === null ? undefined : `Bearer ${TOKEN_PLACEHOLDER}`,
      );
    }
  });

  it('give every route that takes a JSON body one its validator accepts, sent as the type the document lists first', () => {
    const events = exampleEvents() as Record<
      string,
      { headers?: Record<string, string>; body: string | null }
    >;
    const takingBodies = routes.filter((route) => operationContracts[route.operationId].requestBody);
    expect(takingBodies.length).toBeGreaterThanOrEqual(7);
    for (const route of takingBodies) {
      const contract = operationContracts[route.operationId];
      const event = events[eventFileName(route.operationId)];
      expect(event?.headers?.['Content-Type'], route.operationId).toBe(
        contract.requestMediaTypes?.[0] ?? 'application/json',
      );
      const validate = (validators as Record<string, (body: unknown) => boolean>)[
        `validate${contract.requestBody}`
      ];
      expect(validate, route.operationId).toBeTypeOf('function');
      expect(validate?.(JSON.parse(event?.body ?? 'null')), route.operationId).toBe(true);
    }
  });

  it("hold one credit poster stream event: a credit's INSERT that the mapping's filter lets through", () => {
    const event = exampleEvents()['credit-poster.json'] as DynamoDBStreamEvent;
    expect(event.Records).toHaveLength(1);
    const [record] = event.Records;
    expect(record?.eventName).toBe('INSERT');
    expect(matchesFilter(CREDIT_RECORD_FILTER, record)).toBe(true);
    // What the poster reads of it (functions/post-credits): the transfer, the recipient, the position.
    expect(record?.dynamodb?.NewImage?.transferId?.S).toBeTruthy();
    expect(record?.dynamodb?.NewImage?.toAccount?.S).toMatch(/^W#/);
    expect(record?.dynamodb?.SequenceNumber).toMatch(/^\d+$/);
    // The same record as a MODIFY, or as another kind of item, would not reach the poster.
    expect(matchesFilter(CREDIT_RECORD_FILTER, { ...record, eventName: 'MODIFY' })).toBe(false);
    const entry = { ...record, dynamodb: { NewImage: { kind: { S: 'entry' } } } };
    expect(matchesFilter(CREDIT_RECORD_FILTER, entry)).toBe(false);
  });
});
