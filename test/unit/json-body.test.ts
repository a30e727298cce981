import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { ValidateFunction } from 'ajv';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpHandler } from '#shared/http/handler.ts';
import { apiEvent, invoke } from '../support/events.ts';

/*
 * The body middleware parses with middy's parser and maps its refusals to our problems: the outcome
 * must be the one middy's parser alone gives, the same value or the same refusal.
 */

const acceptAll = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction;

/** A handler that answers with the body it was given, parsed. */
const echo = httpHandler<unknown>({
  operationId: 'addPet',
  body: acceptAll,
  run: async ({ body }) => ({ statusCode: 200, body }),
});

type Outcome = { parsed: unknown } | { refused: number; message: string };

/** What middy's parser alone makes of a request: the parsed body or its error's status. */
function middyOutcome(event: APIGatewayProxyEvent): Outcome {
  const request = { event: structuredClone(event) };
  try {
    httpJsonBodyParser().before?.(request as never);
    return { parsed: request.event.body };
  } catch (error) {
    const { statusCode, message } = error as { statusCode: number; message: string };
    return { refused: statusCode, message };
  }
}

/** The HTTP status and body the service answers with, once the body is a JSON object. */
function expectedResponse(outcome: Outcome): { status: number; body?: unknown } {
  if ('refused' in outcome) {
    // Unsupported media type stays 415 and a forbidden key a 422; middy's 422 for invalid JSON is our 400.
    if (outcome.refused === 422 && !outcome.message.startsWith('Forbidden key')) return { status: 400 };
    return { status: outcome.refused };
  }
  const { parsed } = outcome;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { status: 400 };
  return { status: 200, body: parsed };
}

const cases: { name: string; body: string; headers?: Record<string, string>; base64?: boolean }[] = [
  { name: 'a full pet', body: '{"id":7,"name":"Rex","photoUrls":["a"],"tags":[{"id":1,"name":"x"}]}' },
  { name: 'nested arrays and numbers', body: '{"a":[1,2.5,-3e2,{"b":null}],"c":true}' },
  { name: 'a __proto__ key', body: '{"name":"x","__proto__":{"admin":true}}' },
  { name: 'a __proto__ key spelled with escapes', body: '{"\\u005f_proto__":{"admin":true}}' },
  { name: 'a nested __proto__ key', body: '{"a":{"b":{"__proto__":{}}}}' },
  { name: 'a constructor key with a prototype', body: '{"constructor":{"prototype":{"x":1}}}' },
  { name: 'a constructor key without one', body: '{"constructor":"fine"}' },
  { name: '__proto__ only inside a string value', body: '{"name":"__proto__"}' },
  { name: 'a \\u escape elsewhere', body: '{"name":"\\u0041\\u00e9"}' },
  { name: 'other escapes', body: '{"name":"tab\\tquote\\"slash\\/"}' },
  { name: 'invalid JSON', body: '{"name":' },
  { name: 'invalid JSON with a \\u escape', body: '{"\\u00' },
  { name: 'a JSON array', body: '[1,2]' },
  { name: 'a JSON string', body: '"text"' },
  { name: 'an empty body', body: '' },
  {
    name: 'a +json media type',
    body: '{"a":1}',
    headers: { 'Content-Type': 'application/merge-patch+json' },
  },
  {
    name: 'a charset parameter',
    body: '{"a":1}',
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
  },
  { name: 'plain text', body: '{"a":1}', headers: { 'Content-Type': 'text/plain' } },
  { name: 'no content type', body: '{"a":1}', headers: {} },
  {
    name: 'a base64-encoded body',
    body: Buffer.from('{"a":"b"}').toString('base64'),
    base64: true,
  },
];

describe('JSON request bodies', () => {
  it.each(cases)('give what middy alone gives for $name', async ({ body, headers, base64 }) => {
    const event = apiEvent({
      method: 'POST',
      scopes: ['write:pets'],
      rawBody: body,
      ...(headers ? { headers } : {}),
    });
    if (headers && !('Content-Type' in headers)) {
      delete event.headers['Content-Type'];
      delete event.multiValueHeaders['Content-Type'];
    }
    event.isBase64Encoded = base64 === true;

    const expected = expectedResponse(middyOutcome(event));
    const response = await invoke(echo, event);

    expect(response.statusCode).toBe(expected.status);
    if (expected.status === 200) expect(JSON.parse(response.body)).toEqual(expected.body);
  });

  it('read the Content-Type header whatever case its name is in', async () => {
    const event = apiEvent({
      method: 'POST',
      scopes: ['write:pets'],
      rawBody: '{"a":1}',
      headers: { 'CONTENT-TYPE': 'application/json' },
    });
    const response = await invoke(echo, event);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ a: 1 });
  });

  it('name a forbidden key in the validation problem', async () => {
    const response = await invoke(
      echo,
      apiEvent({ method: 'POST', scopes: ['write:pets'], rawBody: '{"\\u005f_proto__":{}}' }),
    );
    expect(response.statusCode).toBe(422);
    expect(JSON.parse(response.body).errors).toEqual([{ pointer: '/__proto__', detail: 'is not allowed' }]);
  });
});
