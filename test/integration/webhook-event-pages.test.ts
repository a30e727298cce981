import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createListEventsHandler } from '#functions/list-events/handler.ts';
import { createDocumentClient } from '#shared/dynamodb/client.ts';
import { tables } from '#shared/dynamodb/tables.ts';
import { decodeJsonCursor, encodeJsonCursor } from '#shared/util/json-cursor.ts';
import { MAX_CURSOR_LENGTH } from '#shared/webhooks/dynamodb/event-store.ts';
import { apiEvent, invoke } from '../support/events.ts';
import { storedEvents } from '../support/webhook-events.ts';

/*
 * The events API's cursor for any address a wallet may have: up to 256 code points, any of them
 * outside ASCII. A cursor that carried the address whole outgrew the bound its own decoder sets,
 * and such a wallet was refused its second page.
 */
const deps = { client: createDocumentClient(), tableName: process.env[tables.webhooks.envVar] as string };
const listEvents = createListEventsHandler(deps);
const SCOPES = ['read:webhooks', 'read:wallet'];

const list = (sub: string, query: string) =>
  invoke(listEvents, apiEvent({ path: '/api/wallet/events', query, sub, scopes: SCOPES }));

describe('the pages of the events API', () => {
  it.each([
    ['256 ASCII characters long', (id: string) => `${'a'.repeat(256 - id.length - 1)}-${id}`],
    ['of characters three UTF-8 bytes each', (id: string) => `${'王'.repeat(81)}-${id}`],
  ])('walks every event of a wallet whose address is %s, a page at a time', async (_, addressOf) => {
    const sub = addressOf(randomUUID());
    const stored = await storedEvents(deps, sub, [0, 1_000, 2_000]);
    const seen: string[] = [];
    let query = 'limit=1';
    for (let page = 0; page < stored.length + 1; page++) {
      const answer = await list(sub, query);
      expect(answer.statusCode, answer.body).toBe(200);
      seen.push(...answer.json.items.map((event: { id: string }) => event.id));
      if (!answer.json.nextCursor) break;
      expect(answer.json.nextCursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
      query = `limit=1&cursor=${encodeURIComponent(answer.json.nextCursor)}`;
    }
    expect(seen).toEqual(stored.map((event) => event.id));
  });

  it("takes a cursor given before the owner's tag, naming the address, as its owner's and no one else's", async () => {
    const sub = `old-cursor-${randomUUID()}`;
    const stored = await storedEvents(deps, sub, [0, 1_000]);
    const first = await list(sub, 'limit=1');
    const [, key] =
      decodeJsonCursor(first.json.nextCursor, { maxLength: MAX_CURSOR_LENGTH, length: 2 }) ?? [];
    expect(typeof key).toBe('string');
    const asGiven = (owner: string) => `limit=1&cursor=${encodeJsonCursor([owner, key])}`;
    const second = await list(sub, asGiven(sub));
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json.items.map((event: { id: string }) => event.id)).toEqual([stored[1]?.id]);
    const another = await list(sub, asGiven(`someone-${randomUUID()}`));
    expect(another.statusCode).toBe(400);
  });
});
