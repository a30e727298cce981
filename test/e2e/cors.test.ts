import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, expectProblem, gateway, tokenFor } from './http.ts';

// The e2e gateway allows one origin (test/support/global-setup.ts), as a stage listing it in
// `api:corsAllowedOrigins` does; without the setting there is no preflight (test/unit/gateway-edges.test.ts).
const allowed = gateway.corsAllowedOrigin;
const other = 'https://evil.example.net';

describe('CORS for a browser app on an allowed origin', () => {
  it('answers the preflight of a protected route with the origin, its methods and the headers a client sends', async () => {
    const result = await call('OPTIONS', '/api/wallet/send', {
      headers: {
        origin: allowed,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });
    expect(result.status).toBe(204);
    expect(result.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(result.headers.get('access-control-allow-methods')).toBe('POST,OPTIONS');
    expect(result.headers.get('access-control-allow-headers')).toBe(
      'Authorization,Content-Type,Idempotency-Key,If-Match,api_key',
    );
    expect(result.headers.get('vary')).toBe('Origin');
  });

  it("adds the origin to a function's answers, success and problem alike, and exposes the headers clients read", async () => {
    const token = await tokenFor('read:wallet read:pets');
    const ok = await call('GET', '/api/wallet/balance', { token, headers: { origin: allowed } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/Idempotent-Replayed/);
    // A pet's ETag and a search's next page, for If-Match and paging from a browser.
    expect(ok.headers.get('access-control-expose-headers')).toMatch(/ETag.*Link/);

    // An id no other test stores (the contract's properties store arbitrary ones, small ones often).
    const absentId = 2 ** 50 + randomInt(2 ** 40);
    const missing = await call('GET', `/api/v3/pet/${absentId}`, { token, headers: { origin: allowed } });
    expectProblem(missing, 404);
    expect(missing.headers.get('access-control-allow-origin')).toBe(allowed);
  });

  it('adds no Access-Control-Allow-Origin for an origin not listed, nor for a request without one', async () => {
    const foreign = await call('GET', '/api/openapi.json', { headers: { origin: other } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(foreign.headers.get('vary')).toMatch(/Origin/);
    const sameOrigin = await call('GET', '/api/openapi.json');
    expect(sameOrigin.headers.get('access-control-allow-origin')).toBeNull();
  });
});
