import { describe, expect, it } from 'vitest';
import { routes } from '#shared/routes.ts';
import { call, tokenFor } from './http.ts';

/** Every name `Object.prototype` answers to, `__proto__` and `constructor` among them. */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

describe('a query parameter or header named after an Object.prototype member', () => {
  it('is an ordinary name: no route answers 5xx to it', async () => {
    expect(PROTOTYPE_NAMES).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'toString']));
    const tokens = new Map<string, string>();
    for (const route of routes) {
      const scope = route.scopes?.join(' ');
      if (scope !== undefined && !tokens.has(scope)) tokens.set(scope, await tokenFor(scope));
    }
    const failures: string[] = [];
    // One after another: in bundled mode, requests at once would each start an execution environment.
    for (const route of routes) {
      for (const name of PROTOTYPE_NAMES) {
        // The name in every place a client controls: path parameter, query parameter, header.
        const path = route.path.replace(/\{\w+\}/g, encodeURIComponent(name));
        const scope = route.scopes?.join(' ');
        const result = await call(route.method, `${path}?${encodeURIComponent(name)}=1`, {
          ...(scope === undefined ? {} : { token: tokens.get(scope) as string }),
          headers: { [name]: '1' },
        });
        if (result.status >= 500) failures.push(`${route.method} ${path} ${name}: ${result.status}`);
      }
    }
    expect(failures).toEqual([]);
    // Every route × every name, one request after another: a few hundred requests.
  }, 180_000);
});
