import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_BYTES } from '#infra/local/invoke/protocol.ts';
import { MAX_BODY_BYTES } from '#infra/local/request-body.ts';
import { call, expectProblem, tokenFor, uniquePetId } from './http.ts';

/**
 * Bodies at API Gateway's and Lambda's size limits. In the `bundled` project too: there a body
 * just within the invocation limit crosses the bundle runner's own (infra/local/invoke/pool.ts).
 */

describe('a large body', () => {
  it('answers 413 when the declared length is too large', async () => {
    const token = await tokenFor('write:pets');
    const result = await call('POST', '/api/v3/pet', {
      token,
      body: new Uint8Array(MAX_BODY_BYTES + 1).fill(0x20),
      headers: { 'content-type': 'application/json' },
    });
    // The text names the limit that was hit: API Gateway's.
    expect(expectProblem(result, 413).detail).toMatch(/API Gateway's payload limit of 10 MB/);
  });

  it('answers 413 for a chunked body once it grows too large', async () => {
    const token = await tokenFor('write:pets');
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_BODY_BYTES + chunk.length) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const result = await call('POST', '/api/v3/pet', {
      token,
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(result, 413);
    // The gateway keeps serving after refusing a body it did not read to the end.
    expectProblem(
      await call('GET', `/api/v3/pet/${uniquePetId()}`, { token: await tokenFor('read:pets') }),
      404,
    );
  });

  it("answers 413 to a body within API Gateway's 10 MB whose event is over Lambda's 6 MB invocation limit", async () => {
    const token = await tokenFor('write:pets');
    const result = await call('POST', '/api/v3/pet', {
      token,
      body: new Uint8Array(MAX_BODY_BYTES).fill(0x20),
      headers: { 'content-type': 'application/json' },
    });
    // The text names the limit that was hit: Lambda's, not API Gateway's 10 MB.
    const { detail } = expectProblem(result, 413);
    expect(detail).toMatch(/Lambda's invocation payload limit of 6 MB/);
    expect(detail).not.toMatch(/exceeds 10 MB/);
  });

  it("passes a body just within Lambda's invocation limit to the function, which then judges it", async () => {
    const token = await tokenFor('write:pets');
    const result = await call('POST', '/api/v3/pet', {
      token,
      // The event around the body (headers, request context) takes a few kilobytes more.
      body: new Uint8Array(MAX_REQUEST_BYTES - 64 * 1024).fill(0x20),
      headers: { 'content-type': 'application/json' },
    });
    // Only whitespace: no JSON value at all, which the function refuses as malformed.
    expectProblem(result, 400);
  });
});
